// Bundles carry the CEL engine without the guards its registry runs on each declaration: the
// installed engine must still read as the plugin expects (else bundles would quietly keep them),
// and a bundle built so must answer as the package does unbundled, in every part of the environment.
// klw-test: no-tsx (what it imports at run time is the bundle it builds)
import assert from 'node:assert/strict';
import { readFileSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import { pathToFileURL } from 'node:url';
import * as esbuild from 'esbuild';
import { ASCII_EDITS, ENGINE_GUARDS, engineGuardsPlugin, withoutGuards } from '../../infra/build-cel-engine.ts';
import { edited } from '../../infra/build-cel-registry.ts';
import { compileExpression, isCompileError } from '../../packages/kube-cel/src/compile.ts';
import { admissionVariables } from '../../packages/kube-cel/src/admission/variables.ts';
import { celEngineFile } from '../helpers.ts';

const dir = mkdtempSync(join(process.cwd(), '.klw-test-cel-engine-'));
after(() => rmSync(dir, { recursive: true, force: true }));

/** The installed engine's registry, as the package resolves it. */
const registryPath = celEngineFile('registry.js');

/** Expressions reaching each part of the environment; evaluated unchecked and checked. */
const EXPRESSIONS = [
  "request.namespace == 'shop' && request.kind != null",
  "authorizer.group('apps').resource('deployments').check('get').allowed()",
  'namespaceObject == null',
  "object.metadata.name.lowerAscii().startsWith('web') && object.spec.replicas <= 5",
  "quantity('1Gi').isGreaterThan(quantity('1Mi')) && ip('10.0.0.1').family() == 4",
  "sets.contains([1, 2, 3], [2]) && [3, 1].sort() == [1, 3] && url('https://x/y').getHost() == 'x'",
  "int(timestamp('2024-01-01T00:00:00Z')) > 0 && duration('1s') != null && b'a' < b'b'",
  "string(object.spec.replicas) + ' of ' + request.name",
  '1 + 1u',
];

const review = {
  uid: 'u',
  kind: { group: 'apps', version: 'v1', kind: 'Deployment' },
  resource: { group: 'apps', version: 'v1', resource: 'deployments' },
  operation: 'CREATE',
  name: 'web',
  namespace: 'shop',
  userInfo: { username: 'alice', groups: ['dev'] },
  object: { metadata: { name: 'Web-1' }, spec: { replicas: 3 } },
};

/** Each expression's answer, checked and unchecked, as text (the same code runs in the bundle). */
function answers(compile: typeof compileExpression, isError: typeof isCompileError, variables: object): string[] {
  return EXPRESSIONS.flatMap((e) =>
    [true, false].map((typeCheck) => {
      const c = compile(e, { typeCheck });
      if (isError(c)) return `compile: ${c.message}`;
      try {
        const { value, cost } = c.evaluate(variables as Record<string, unknown>);
        return `${String(value)} ${cost}`;
      } catch (err) {
        return `error: ${(err as Error).message}`;
      }
    }),
  );
}

describe('the CEL engine in bundles', () => {
  it('reads as the plugin expects: each guard once in the installed engine', () => {
    const text = readFileSync(registryPath, 'utf8');
    const patched = withoutGuards(text);
    assert.ok(patched, 'the engine changed: update ENGINE_GUARDS in infra/build-cel-engine.ts');
    for (const { to, method } of ENGINE_GUARDS) assert.ok(patched.includes(to), method);
  });

  it('leaves an engine whose text changed as it is', () => {
    const text = readFileSync(registryPath, 'utf8');
    const [first, second] = ENGINE_GUARDS;
    assert.equal(withoutGuards(text.replace(first!.from, '  #renamed(newDec) {\n')), undefined);
    assert.equal(withoutGuards(`${text}\n${second!.from}`), undefined);
  });

  it('answers in a bundle without the guards as the package unbundled', async () => {
    const entry = join(dir, 'entry.ts');
    const src = (p: string) => JSON.stringify(join(process.cwd(), 'packages', 'kube-cel', 'src', p));
    writeFileSync(
      entry,
      `export { compileExpression, isCompileError } from ${src('compile.ts')};
export { admissionVariables } from ${src('admission/variables.ts')};
export { loadLibraries } from ${src('libraries/all.ts')};
`,
    );
    const outfile = join(dir, 'bundle.mjs');
    await esbuild.build({
      entryPoints: [entry],
      bundle: true,
      minify: true,
      platform: 'node',
      format: 'esm',
      outfile,
      logLevel: 'silent',
      external: ['re2js'],
      plugins: [engineGuardsPlugin()],
    });
    const text = readFileSync(outfile, 'utf8');
    assert.ok(!text.includes('overlaps with existing overload'), 'bundled without the guards');
    // Read by Node into a string of one byte a character (see ASCII_EDITS).
    assert.equal(text.match(/[^\x00-\x7f]/)?.[0], undefined, 'the bundle is ASCII');
    // V8 reads a regular expression literal's classes with the module: Unicode properties (thousands
    // of ranges) only in patterns built when used.
    assert.ok(text.includes('\\p{L}'), 'the bundle quotes as Go does');
    assert.equal(text.match(/\/[^/\n]*\\p\{[^/\n]*\/[a-z]*u/)?.[0], undefined, 'no literal with a Unicode property');
    const bundled = (await import(pathToFileURL(outfile).href)) as {
      compileExpression: typeof compileExpression;
      isCompileError: typeof isCompileError;
      admissionVariables: typeof admissionVariables;
      loadLibraries: () => Promise<void>;
    };
    await bundled.loadLibraries();
    // Each side's own variables: the authorizer is a value of its own classes.
    const options = { authorize: () => ({ decision: 'Allow' as const }) };
    const here = answers(compileExpression, isCompileError, admissionVariables(review as never, options));
    const there = answers(
      bundled.compileExpression,
      bundled.isCompileError,
      bundled.admissionVariables(review as never, options),
    );
    assert.deepEqual(there, here);
    assert.ok(here.filter((a) => a.startsWith('true')).length >= 12, here.join('\n'));
  });

  it('escapes what the engine writes beyond ASCII: the installed engine reads as the edit expects', () => {
    const functions = readFileSync(join(registryPath, '..', 'functions.js'), 'utf8');
    const escaped = edited(functions, ASCII_EDITS);
    assert.ok(escaped, 'the engine changed: update ASCII_EDITS in infra/build-cel-engine.ts');
    // The duration units still read as written (`\u00b5` in a regular expression is U+00B5).
    const pattern = ASCII_EDITS[0]!.to.slice(1, -1);
    assert.deepEqual(new RegExp(pattern).exec('1.5\u00b5s')?.slice(1), ['1.5', '\u00b5s']);
  });
});
