// The environment bundled and minified as functions are deployed: values are told apart by their
// classes, not by class names, which minifying renames.
// klw-test: no-tsx (what it imports at run time is the bundle it builds)
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
    const cel = join(import.meta.dirname, '..', 'src', 'compile.ts');
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
    // Durations are told apart by the engine's class, imported by the time code from its own entry point.
    assert.equal(
      answer("string(duration('1h') + timestamp('2024-01-01T00:00:00.000000001Z'))"),
      '2024-01-01T01:00:00.000000001Z',
    );
    assert.equal(answer("[duration('2s'), duration('1s')].sum() == duration('3s')"), true);
    // The engine's parser is extended through its method names, which minifying keeps.
    assert.equal(answer("[?optional.none(), ?optional.of(1)] == [1] && {?'k': optional.none()} == {}"), true);
  });
});
