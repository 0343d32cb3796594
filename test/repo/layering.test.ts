// What may import what: the Lambda runtime (lib/) never pulls tool code, the tools (infra/) never
// reach into the test kit (lib/testing/); both share lib/harness/ (events, reviews, invoke, discovery).
// The toolkit's tests reach the examples in functions/ only through the fixture project (test/fixtures/).
// Users' code (the examples, their tests, the templates) imports only the package's public entry points.
import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { describe, it } from 'node:test';
import * as esbuild from 'esbuild';
import { bundleOptions } from '../../infra/build.ts';
import { FIXTURE_PROJECT } from '../helpers.ts';
import { relativeImports, sources } from './imports.ts';

const root = process.cwd();

/** `file -> import` for every import of the files that lands in a forbidden folder. */
export function violations(files: Array<{ file: string; text: string }>, forbidden: string[]): string[] {
  return files.flatMap(({ file, text }) =>
    relativeImports(file, text)
      .filter((target) => forbidden.some((f) => target === f || target.startsWith(`${f}/`)))
      .map((target) => `${file} -> ${target}`),
  );
}

/** Folders whose tests must use the fixture project, never the repository's example functions. */
const TOOLKIT_TESTS = ['test/lib', 'test/infra'];

/**
 * `file:line -> what` for every reference of the files to the repository's functions/ folder:
 * relative imports and `new URL(…, import.meta.url)` landing there, paths joined onto the
 * repository root (`process.cwd()` or a variable set to it) and cwd-relative file calls.
 */
export function exampleReferences(files: Array<{ file: string; text: string }>): string[] {
  const inExamples = (target: string) => target === 'functions' || target.startsWith('functions/');
  return files.flatMap(({ file, text }) => {
    const roots = [
      'process\\.cwd\\(\\)',
      ...[...text.matchAll(/(?:const|let)\s+(\w+)\s*=\s*process\.cwd\(\)/g)].map((m) => m[1]!),
    ];
    const joined = new RegExp(
      `(?:join|resolve)\\(\\s*(?:${roots.join('|')})\\s*,\\s*['"\`](?:\\.\\/)?functions(?:['"\`/])`,
    );
    const cwdRelative = /(?:readFileSync|existsSync|readdirSync|statSync|cpSync)\(\s*['"`](?:\.\/)?functions\//;
    const urls = /new URL\(\s*['"`](\.{1,2}\/[^'"`]+)['"`]\s*,\s*import\.meta\.url/g;
    return text.split('\n').flatMap((line, i) => {
      const where = `${file}:${i + 1}`;
      const targets = [
        ...relativeImports(file, line),
        ...[...line.matchAll(urls)].map((m) => relative(root, resolve(root, dirname(file), m[1]!))),
      ].filter(inExamples);
      const found = targets.map((t) => `${where} -> ${t}`);
      if (joined.test(line) || cwdRelative.test(line)) found.push(`${where} -> ${line.trim()}`);
      return found;
    });
  });
}

/** Every TypeScript file under a folder, tests included, relative to the repository. */
function allSources(dir: string): string[] {
  return readdirSync(join(root, dir), { recursive: true, withFileTypes: true })
    .filter((d) => d.isFile() && /\.(ts|mts)$/.test(d.name))
    .map((d) => relative(root, join(d.parentPath, d.name)));
}

/**
 * `file -> specifier` for every import of users' code (example functions, templates) that is not
 * a public entry point: a `kube-lambda-webhooks` path package.json does not export, or a relative
 * path into the package's own lib/ or infra/.
 */
export function privateImports(files: Array<{ file: string; text: string }>, exported: string[]): string[] {
  const specifiers = /(?:from\s+|import\s*\(\s*|^import\s+)['"]([^'"]+)['"]/gm;
  return files.flatMap(({ file, text }) =>
    [...text.matchAll(specifiers)]
      .map((m) => m[1]!)
      .filter((s) => {
        if (s === 'kube-lambda-webhooks' || s.startsWith('kube-lambda-webhooks/')) return !exported.includes(s);
        // A template's relative paths resolve in the project it is written into, not here.
        if (!s.startsWith('.') || file.startsWith('infra/templates/')) return false;
        const target = relative(root, resolve(root, dirname(file), s));
        return /^(lib|infra)(\/|$)/.test(target);
      })
      .map((s) => `${file} -> ${s}`),
  );
}

/** Every file under a folder, relative to the repository. */
function allFiles(dir: string): string[] {
  return readdirSync(join(root, dir), { recursive: true, withFileTypes: true })
    .filter((d) => d.isFile())
    .map((d) => relative(root, join(d.parentPath, d.name)));
}

/** The library modules the tools (infra/) import: the entry points, and the harness they share with the test kit. */
const TOOL_ENTRY_POINTS = ['lib/index.ts', 'lib/internal.ts', 'lib/matchconditions/index.ts', 'lib/policies/index.ts'];

/** Library internals the tools still import directly rather than through lib/internal.ts: a list that only shrinks. */
const DIRECT_IMPORTS_LEFT = [
  'lib/admission/webhook.ts',
  'lib/handler/fleet.ts',
  'lib/k8s/names.ts',
  'lib/matchconditions/matcher.ts',
  'lib/matchconditions/rules.ts',
  'lib/registration.ts',
];

/** The library modules, other than the entry points and the harness, that the files import. */
export function internalImports(files: Array<{ file: string; text: string }>): string[] {
  return files.flatMap(({ file, text }) =>
    relativeImports(file, text).filter(
      (target) =>
        target.startsWith('lib/') && !TOOL_ENTRY_POINTS.includes(target) && !target.startsWith('lib/harness/'),
    ),
  );
}

const read = (files: string[]) => files.map((file) => ({ file, text: readFileSync(join(root, file), 'utf8') }));
const lib = sources('lib');
const runtime = lib.filter((f) => !f.startsWith('lib/testing/') && !f.startsWith('lib/harness/'));

describe('layers', () => {
  it('the checks see imports and can fail', () => {
    const sample = [
      {
        file: 'infra/x.ts',
        text: "import { a } from '../lib/testing/chain.ts';\nconst m = await import('./local/api.ts');\nimport './side.ts';\n",
      },
    ];
    assert.deepEqual(relativeImports(sample[0]!.file, sample[0]!.text), [
      'lib/testing/chain.ts',
      'infra/local/api.ts',
      'infra/side.ts',
    ]);
    assert.deepEqual(violations(sample, ['lib/testing']), ['infra/x.ts -> lib/testing/chain.ts']);
    assert.ok(runtime.includes('lib/index.ts') && runtime.length > 10, 'the runtime files were found');
  });

  it('lib/ never imports the tools', () => {
    assert.deepEqual(violations(read(lib), ['infra']), []);
  });

  it('the Lambda runtime never imports the test kit or the harness', () => {
    assert.deepEqual(violations(read(runtime), ['lib/testing', 'lib/harness']), []);
  });

  it('the tools never reach into the test kit', () => {
    assert.deepEqual(violations(read(sources('infra')), ['lib/testing']), []);
  });

  it('the tools import the library through its entry points, lib/internal.ts and the harness', () => {
    const sample = [
      { file: 'infra/x.ts', text: "import { a } from '../lib/internal.ts';\nimport { b } from '../lib/json.ts';\n" },
    ];
    assert.deepEqual(internalImports(sample), ['lib/json.ts']);
    const left = [...new Set(internalImports(read(sources('infra'))))].sort();
    // A new direct import fails here (import it through lib/internal.ts); so does a module that
    // is no longer imported directly (take it off the list, which only shrinks).
    assert.deepEqual(left, [...DIRECT_IMPORTS_LEFT].sort());
  });

  it('the examples check sees imports, URLs and paths into functions/ and can fail', () => {
    // Quotes are spliced in so this file's own samples are not references themselves.
    const q = "'";
    const sample = [
      {
        file: 'test/lib/x.test.ts',
        text: [
          `import { webhook } from ${q}../../functions/pod-policy/index.ts${q};`,
          `import type { Pod } from ${q}../fixtures/functions.ts${q};`,
          `const root = process.cwd();`,
          `const entry = join(root, ${q}functions${q}, name, ${q}index.ts${q});`,
          `const other = join(process.cwd(), ${q}functions/pod-policy${q});`,
          `const fixture = join(root, ${q}test${q}, ${q}functions${q});`,
          `const url = new URL(${q}../../functions/pod.ts${q}, import.meta.url);`,
          `const text = readFileSync(${q}functions/pod.ts${q}, 'utf8');`,
          `const own = readFileSync(${q}test/functions/conformance.test.ts${q}, 'utf8');`,
        ].join('\n'),
      },
    ];
    assert.deepEqual(exampleReferences(sample), [
      'test/lib/x.test.ts:1 -> functions/pod-policy/index.ts',
      `test/lib/x.test.ts:4 -> const entry = join(root, ${q}functions${q}, name, ${q}index.ts${q});`,
      `test/lib/x.test.ts:5 -> const other = join(process.cwd(), ${q}functions/pod-policy${q});`,
      'test/lib/x.test.ts:7 -> functions/pod.ts',
      `test/lib/x.test.ts:8 -> const text = readFileSync(${q}functions/pod.ts${q}, 'utf8');`,
    ]);
  });

  it('the toolkit tests reach the example functions only through the fixture project', () => {
    const files = TOOLKIT_TESTS.flatMap(allSources);
    assert.ok(
      files.includes('test/lib/admission/decision.warnings.test.ts') &&
        files.includes('test/infra/deploy/serverless.parity.test.ts'),
      'the toolkit tests were found',
    );
    assert.deepEqual(exampleReferences(read(files)), []);
  });

  it("users' functions and templates import only the public entry points, and the check can fail", () => {
    const manifest = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')) as {
      exports: Record<string, unknown>;
    };
    const exported = Object.keys(manifest.exports).map((k) =>
      k === '.' ? 'kube-lambda-webhooks' : `kube-lambda-webhooks/${k.slice(2)}`,
    );
    const q = "'";
    const sample = [
      {
        file: 'functions/x/index.ts',
        text: [
          `import { allow } from ${q}kube-lambda-webhooks${q};`,
          `import { invoke } from ${q}kube-lambda-webhooks/testing${q};`,
          `import { createMatcher } from ${q}kube-lambda-webhooks/matchconditions/matcher${q};`,
          `import { enforcementEnvFor } from ${q}../../lib/admission/enforcement.ts${q};`,
          `import { podRules } from ${q}../pod.ts${q};`,
        ].join('\n'),
      },
    ];
    assert.deepEqual(privateImports(sample, exported), [
      `functions/x/index.ts -> kube-lambda-webhooks/matchconditions/matcher`,
      'functions/x/index.ts -> ../../lib/admission/enforcement.ts',
    ]);
    const users = ['functions', 'infra/templates', 'test/functions'].flatMap(allFiles);
    assert.ok(
      users.some((f) => f.endsWith('.tmpl')) && users.includes('functions/pod.ts'),
      "the users' files were found",
    );
    assert.deepEqual(privateImports(read(users), exported), []);
  });

  it('a function bundle holds no tool, test-kit or harness code', async () => {
    for (const name of ['pod-policy', 'pod-defaults', 'crontab-conversion']) {
      const options = bundleOptions(FIXTURE_PROJECT, {
        name,
        entry: join(FIXTURE_PROJECT, 'functions', name, 'index.ts'),
      });
      const out = await esbuild.build({ ...options, write: false, metafile: true });
      const inputs = Object.keys(out.metafile.inputs).map((i) => relative(root, resolve(FIXTURE_PROJECT, i)));
      assert.ok(
        inputs.includes('lib/index.ts') || inputs.some((i) => i.startsWith('lib/')),
        `${name}: the bundle holds the runtime`,
      );
      assert.deepEqual(
        inputs.filter(
          (i) =>
            /^(infra|lib\/testing|lib\/harness)\//.test(i) ||
            i.includes('node_modules/esbuild') ||
            i.includes('node_modules/commander'),
        ),
        [],
        name,
      );
    }
  });

  it("the toolkit reaches Kubernetes' CEL only through the package's facade", () => {
    const sample = [
      { file: 'lib/x.ts', text: "import { compile } from '../packages/kube-cel/src/index.ts';\n" },
      { file: 'infra/x.ts', text: "import { charge } from '../packages/kube-cel/src/cost/meter.ts';\n" },
    ];
    assert.deepEqual(celInternals(sample), ['infra/x.ts -> packages/kube-cel/src/cost/meter.ts']);
    const toolkit = [...lib, ...sources('infra')];
    assert.ok(
      relativeImports(
        'lib/matchconditions/matcher.ts',
        readFileSync(join(root, 'lib/matchconditions/matcher.ts'), 'utf8'),
      ).includes(CEL_FACADE),
      'the matcher imports the facade',
    );
    assert.deepEqual(celInternals(read(toolkit)), []);
  });

  it('the package imports nothing of the toolkit', () => {
    const files = read(sources(CEL_PACKAGE));
    assert.ok(files.length > 40, 'the package sources were found');
    const outside = files.flatMap(({ file, text }) =>
      relativeImports(file, text)
        .filter((target) => !target.startsWith(`${CEL_PACKAGE}/`))
        .map((target) => `${file} -> ${target}`),
    );
    assert.deepEqual(outside, []);
  });

  it('one adapter module is the only importer of the CEL engine', () => {
    // The name is spliced so that this file's own samples are no imports themselves.
    const engine = ['@marcbachmann', 'cel-js'].join('/');
    const sample = [
      { file: 'a.ts', text: `import { Environment } from '${engine}';\n` },
      { file: 'b.ts', text: `const m = await import('${engine}/evaluator');\n` },
      { file: 'c.ts', text: `// ${engine}, in a comment\n` },
    ];
    assert.deepEqual(engineImporters(sample), ['a.ts', 'b.ts']);
    const everything = ['lib', 'infra', 'test', 'bench', 'functions', 'packages'].flatMap(allSources);
    assert.deepEqual(engineImporters(read(everything)), [CEL_ENGINE_ADAPTER]);
  });
});

/** The package of Kubernetes' CEL, its facade and the adapter to the engine underneath. */
const CEL_PACKAGE = 'packages/kube-cel';
const CEL_FACADE = `${CEL_PACKAGE}/src/index.ts`;
/** The package's subpath for bundlers (`./bundling`): the names a build shares with a bundle. */
const CEL_BUNDLING = `${CEL_PACKAGE}/src/bundling.ts`;
const CEL_ENGINE_ADAPTER = `${CEL_PACKAGE}/src/engine.ts`;

/** `file -> import` for every import of the files into the CEL package other than its facades. */
export function celInternals(files: Array<{ file: string; text: string }>): string[] {
  return files.flatMap(({ file, text }) =>
    relativeImports(file, text)
      .filter((target) => target.startsWith(`${CEL_PACKAGE}/`) && target !== CEL_FACADE && target !== CEL_BUNDLING)
      .map((target) => `${file} -> ${target}`),
  );
}

/** The files that import the CEL engine (`@marcbachmann/cel-js` or a subpath of it). */
export function engineImporters(files: Array<{ file: string; text: string }>): string[] {
  const engine = /(?:from\s+|import\s*\(\s*|^import\s+)['"]@marcbachmann\/cel-js(?:\/[^'"]*)?['"]/m;
  return files.filter(({ text }) => engine.test(text)).map(({ file }) => file);
}
