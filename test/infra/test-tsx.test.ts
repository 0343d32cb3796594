// klw test runs a test file that loads TypeScript at run time through tsx (infra/test-tsx.mjs), in a
// process of its own, as the source file, beside the built files of the same run.
// klw-test: no-tsx (its import() calls are text of the files it writes)
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { readTestTimes } from '../../infra/test-runner.ts';
import { HELPER, klwTest, project, scratchFolders } from './test-runner.projects.ts';

const { inside } = scratchFolders();

describe('klw test through tsx', () => {
  it('runs a file that imports TypeScript at run time through tsx, as the source file, beside built ones', () => {
    const dir = project(inside, 'tsx', {
      'test/dynamic.test.ts': `import assert from 'node:assert/strict';
import { it } from 'node:test';
import { pathToFileURL } from 'node:url';
it('imports a .ts file named at run time', async () => {
  const name = ['helper', 'ts'].join('.');
  const { twice } = await import(pathToFileURL(\`\${process.cwd()}/test/\${name}\`).href);
  assert.equal(twice(3), 6);
  assert.equal(process.argv[1], \`\${process.cwd()}/test/dynamic.test.ts\`);
});
`,
      'test/static.test.ts': `import assert from 'node:assert/strict';
import { it } from 'node:test';
import { twice } from './helper.ts';
it('is built', () => {
  assert.equal(twice(2), 4);
  assert.match(process.argv[1]!, /node_modules\\/\\.cache\\/klw-test\\/.*\\/test\\/static\\.test\\.mjs$/);
  assert.equal(import.meta.filename, \`\${process.cwd()}/test/static.test.ts\`);
});
`,
      'test/helper.ts': HELPER,
    });
    const { code, out } = klwTest(dir, '--reporter', 'tap');
    assert.equal(code, 0, out);
    assert.match(out, /^# pass 2$/m);
    assert.deepEqual(Object.keys(readTestTimes(dir)).sort(), ['test/dynamic.test.ts', 'test/static.test.ts']);
  });
});
