// klw test shows the source files of the built test files it runs (infra/test-names.mjs): their
// paths in every reporter, their .ts lines in failures, their times kept by source.
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { readTestTimes } from '../../infra/test-runner.ts';
import { FAILING, HELPER, klwTest, project, scratchFolders } from './test-runner.projects.ts';

const { outside } = scratchFolders();

describe('klw test from the build, as the sources', () => {
  it('reports a failing built file by its source path and .ts line, with the exit code, without tsx', () => {
    const dir = project(outside, 'failing', {
      'test/a.test.ts': FAILING,
      'test/helper.ts': HELPER,
      'test/b.test.ts': "throw new Error('broken at load');\n",
    });
    const { code, out } = klwTest(dir, '--reporter', 'spec');
    assert.equal(code, 1, out);
    assert.match(out, /klw: tests failed \(node --test exited with 1\)/);
    assert.match(out, /^test at test\/a\.test\.ts:6:1$/m, 'the failing test, at its .ts line');
    assert.match(out, new RegExp(`\\(${join(dir, 'test', 'a.test.ts')}:8:10\\)`), 'the stack, at the assertion');
    assert.match(out, new RegExp(`✖ ${join(dir, 'test', 'b.test.ts')} `), 'a file failing to load, by its source');
    assert.match(out, /Error: broken at load/);
    assert.doesNotMatch(out, /node_modules\/\.cache|\.mjs/, 'no built path is shown');
    assert.deepEqual(Object.keys(readTestTimes(dir)).sort(), ['test/a.test.ts', 'test/b.test.ts']);
  });

  it('passes a custom reporter the source paths, and filters by test name', () => {
    const dir = project(outside, 'reporter', {
      'test/a.test.ts': "import { it } from 'node:test';\nit('one', () => {});\nit('two', () => {});\n",
      'files.mjs':
        "export default async function* (source) { for await (const e of source) if ((e.type === 'test:pass' && !e.data.skip) || e.type === 'test:dequeue') yield `${e.type === 'test:pass' ? 'pass' : 'start'} ${e.data.name} ${e.data.file}\\n`; }\n",
    });
    const { code, out } = klwTest(dir, '--reporter', './files.mjs', '--name-pattern', 'two');
    assert.equal(code, 0, out);
    const file = join(dir, 'test', 'a.test.ts');
    assert.match(out, new RegExp(`^pass two ${file}$`, 'm'));
    assert.match(out, new RegExp(`^start ${file} ${file}$`, 'm'), 'the file itself, named after its source');
    assert.doesNotMatch(out, /^pass one /m, 'left out by its name');
  });
});
