// The environment bundled and minified as functions are deployed: values are told apart by their
// classes, not by class names, which minifying renames.
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import { pathToFileURL } from 'node:url';
import { build } from 'esbuild';

const dir = mkdtempSync(join(tmpdir(), 'klw-cel-minified-'));
after(() => rmSync(dir, { recursive: true, force: true }));

describe('matchConditions minified', () => {
  it('formats durations and types with string.format, reads optional entries', async () => {
    const entry = join(dir, 'entry.ts');
    const cel = join(process.cwd(), 'lib', 'matchconditions', 'cel.ts');
    writeFileSync(
      entry,
      `import { compileExpression, isCompileError } from ${JSON.stringify(cel)};
export function answer(e: string): unknown {
  const c = compileExpression(e);
  if (isCompileError(c)) return c.message;
  return c.run({ object: null, oldObject: null, request: {}, namespaceObject: null, authorizer: null });
}
`,
    );
    const outfile = join(dir, 'bundle.mjs');
    await build({
      entryPoints: [entry],
      bundle: true,
      minify: true,
      platform: 'node',
      format: 'esm',
      outfile,
      logLevel: 'silent',
    });
    const { answer } = (await import(pathToFileURL(outfile).href)) as { answer(e: string): unknown };
    assert.equal(answer("'%s'.format([duration('90s')])"), '90s');
    assert.equal(answer("'%s'.format([type(1)])"), 'int');
    assert.equal(answer("sign(quantity('-2'))"), -1n);
    // The engine's parser is extended through its method names, which minifying keeps.
    assert.equal(answer("[?optional.none(), ?optional.of(1)] == [1] && {?'k': optional.none()} == {}"), true);
  });
});
