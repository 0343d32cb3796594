// Every example in README.md and docs/*.md is checked as a user would use it. TypeScript blocks
// are written into a scratch project inside this repository (so `kube-lambda-webhooks` resolves
// as it does for functions here) and type-checked with tsc (type-check.mjs: the examples' errors,
// the package's sources read for their types); function blocks are loaded, built and
// answer a review, test blocks pass under node --test, and the other blocks run as scripts
// against `klw local start-lambda`, their `console.log(...); // expected` lines compared (test and
// script blocks built into JavaScript with esbuild, as `klw test` runs TypeScript). A block
// marked ```ts no-check is left out, and counted. The test examples run on every run, the
// type-check whenever a file it reads changed (kept-check.ts). Shell blocks and inline code name
// only klw commands and options that exist (read from klw's own --help) and npm scripts that
// exist; YAML and JSON blocks parse; every relative link points to a file and heading that exist.
// klw-test: no-tsx (it imports the functions' build; createRequire only resolves tsc's path)
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import {
  existsSync,
  lstatSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  type Stats,
  writeFileSync,
} from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join, relative } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { parseAllDocuments } from 'yaml';
import { cachedBuild, cacheFolder } from '../../infra/build-cache.mjs';
import { parseFleet } from '../../infra/fleet/file.ts';
import { loadFunctions } from '../../infra/functions.ts';
import { projectPackageJson } from '../../infra/init.ts';
import { type RunningLambda, startLambda } from '../../infra/local/lambda-api.ts';
import type { AdmissionWebhook } from '../../lib/admission/webhook.ts';
import type { ConversionWebhook } from '../../lib/conversion/webhook.ts';
import { admissionReview, conversionReview, invoke } from '../../lib/testing/index.ts';
import { ManualTimer } from '../helpers.ts';
import { runSuites, type SuitesRun } from '../suites.ts';
import { keptTypeCheck, listedFiles } from './kept-check.ts';
import { klwHelpTexts } from './klw-help.ts';
import {
  anchors,
  type Block,
  fencedBlocks,
  type Help,
  inlineCode,
  invocationOf,
  optionNames,
  parseHelp,
  prose,
  relativeLinks,
  shellCommands,
} from './markdown.ts';

/** The functions' timeouts never run out: a cold start on a loaded machine takes as long as it takes. */
const never = new ManualTimer().timer;

/** Blocks marked ```ts no-check: examples that show a shape, not code that compiles. Raise it deliberately. */
const NO_CHECK_BLOCKS = 0;

/** Options of other tools the text names: tsc, kube-apiserver, npm run bench, node, serverless, cloudflared. */
const OTHER_TOOLS_OPTIONS = new Set([
  '--noEmit',
  '--admission-control-config-file',
  '--quick',
  '--import',
  '--test',
  '--enable-source-maps',
  '--param',
  '--no-tls-verify',
]);

/** A path into this repository as the text writes one: `lib/gateway/sources.ts`, `test/e2e/`. */
const REPOSITORY_PATH = /(?:^|[\s(])((?:lib|infra|test|bench|etc|functions|docs|\.ci)\/[\w./*<>-]*)/g;
/** Paths the text names that a run writes, not the repository. */
const GENERATED = new Set(['bench/results/latest.json']);

const root = fileURLToPath(new URL('../../', import.meta.url));
/** README.md and every page of docs/, relative to the repository. */
const docs = [
  'README.md',
  ...readdirSync(join(root, 'docs'))
    .filter((f) => f.endsWith('.md'))
    .map((f) => `docs/${f}`),
];
const text = new Map(docs.map((d) => [d, readFileSync(join(root, d), 'utf8')]));
const allBlocks = docs.flatMap((d) => fencedBlocks(d, text.get(d)!));

const isTs = (b: Block) => b.lang === 'ts' || b.lang === 'typescript';
const noCheck = (b: Block) => b.flags.includes('no-check');
const blocks = allBlocks.filter((b) => isTs(b) && !noCheck(b));
const isFunction = (b: Block) =>
  /\bdefine(Validating|Mutating|Conversion)(Webhook|Policy)\s*[<(]/.test(b.code) && /export default/.test(b.code);
const isTest = (b: Block) => /from 'node:test'/.test(b.code);
const nameOf = (b: Block) => /\bname:\s*'([a-z0-9-]+)'/.exec(b.code)?.[1];
const where = (b: Block, offset = 0) => `${b.doc}:${b.line + offset}`;

const work = mkdtempSync(join(root, '.klw-test-docs-'));
/** Where the docs' type-check keeps its pass (kept-check.ts); anything but a folder there is removed. */
const keptPass = () => join(cacheFolder(join(root, 'node_modules', '.cache', 'klw-docs-tsc')), 'docs-pass.json');
/** The docs' type-check (type-check.mjs): tsc's program of the scratch project, the examples' errors. */
const TYPE_CHECK = fileURLToPath(new URL('./type-check.mjs', import.meta.url));

/**
 * The folder tsc checks: the scratch project's TypeScript at a path that stays the same from run to
 * run, so that the pass kept of its last check applies (a new folder each run is all new files).
 * Files of blocks no longer in the docs are removed, unchanged files are left as they are, and
 * anything but a real folder or file there (a planted symlink) is removed, never followed.
 */
const TSC_WORK = join(root, '.klw-test-docs-tsc');

/** Makes `folder` hold exactly `wanted` (relative path to text), writing only what differs. */
function syncFolder(folder: string, wanted: Map<string, string>): void {
  if (lstatIfThere(folder) && !lstatIfThere(folder)!.isDirectory()) rmSync(folder, { force: true });
  const prune = (dir: string) => {
    for (const name of existsSync(dir) ? readdirSync(dir) : []) {
      const path = join(dir, name);
      const stat = lstatSync(path);
      if (stat.isDirectory()) prune(path);
      else if (!stat.isFile() || !wanted.has(relative(folder, path))) rmSync(path, { force: true });
    }
  };
  prune(folder);
  for (const [name, text] of wanted) {
    const path = join(folder, name);
    mkdirSync(dirname(path), { recursive: true });
    if (!existsSync(path) || readFileSync(path, 'utf8') !== text) writeFileSync(path, text);
  }
}

/** What is at `path`, not following a symlink, or undefined. */
function lstatIfThere(path: string): Stats | undefined {
  try {
    return lstatSync(path);
  } catch {
    return undefined;
  }
}

/** Where each block was written, to map tsc's positions back to Markdown lines. */
const files = new Map<string, Block>();
/** Each function's block; the same function shown on two pages must be the same code. */
const functionBlocks = new Map<string, Block>();
/** A function shown again, after its first block: the pair (first, again). */
const repeated: Array<[Block, Block]> = [];
let lambda: RunningLambda | undefined;

function run(args: string[], cwd = root): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    execFile(
      process.execPath,
      args,
      { cwd, encoding: 'utf8', env: { ...process.env, NODE_TEST_CONTEXT: undefined }, maxBuffer: 16 << 20 },
      (err, stdout, stderr) =>
        resolve({ code: err ? Number((err as { code?: number }).code ?? 1) : 0, stdout, stderr }),
    );
  });
}

const fileOf = (block: Block) => [...files].find(([, b]) => b === block)?.[0];

/** A block's file (a path in the scratch project) as an entry of a build: its path without `.ts`. */
const entryOf = (file: string) => relative(work, file).replace(/\.ts$/, '');

/**
 * The docs' TypeScript files (the scratch project's, relative path to text) built into JavaScript
 * in one build, the package's sources shared in chunks, as `klw test` builds test files: the
 * folder of the build, where each file is its entry's path with `.mjs`.
 */
const buildBlocks = (name: string, blockFiles: string[]): Promise<string> =>
  cachedBuild({
    root: work,
    cacheDir: join(work, '.klw', name),
    entryPoints: Object.fromEntries(blockFiles.map((file) => [entryOf(file), relative(work, file)])),
    sourceUrls: true,
  }).then((b) => b.dir);

let built: Promise<string> | undefined;
/**
 * The folder of the docs' functions and test examples built into JavaScript (one build), which the
 * function tests import (this file runs without tsx) and node --test runs.
 */
const builtFunctions = (): Promise<string> =>
  (built ??= buildBlocks('docs-functions', [
    ...[...functionBlocks.keys()].map((name) => join(work, 'functions', name, 'index.ts')),
    ...blocks.filter(isTest).map((block) => fileOf(block)!),
  ]));

let examples: Promise<SuitesRun> | undefined;
/** Every test example, built, run once under node --test, all in one process (test/suites.ts). */
const testExamples = (): Promise<SuitesRun> =>
  (examples ??= builtFunctions().then((dir) =>
    runSuites(
      join(work, 'test', 'docs', 'examples.mjs'),
      blocks.filter(isTest).map((block) => [where(block), join(dir, `${entryOf(fileOf(block)!)}.mjs`)]),
      root,
      { tsx: false },
    ),
  ));

before(() => {
  for (const block of blocks) {
    if (isFunction(block)) {
      const name = nameOf(block);
      assert.ok(name, `${where(block)}: a function block names its function`);
      const first = functionBlocks.get(name);
      if (first) {
        repeated.push([first, block]);
        continue;
      }
      functionBlocks.set(name, block);
      const file = join(work, 'functions', name, 'index.ts');
      mkdirSync(dirname(file), { recursive: true });
      writeFileSync(file, block.code);
      files.set(file, block);
    } else {
      // Two folders deep, so `../../functions/<name>/index.ts` finds the docs' functions.
      const stem = `${block.doc.replace(/\.md$/, '').replace(/\W/g, '-')}-line-${block.line}`;
      const file = join(work, 'test', 'docs', `${stem}${isTest(block) ? '.test' : ''}.ts`);
      mkdirSync(dirname(file), { recursive: true });
      writeFileSync(file, block.code);
      files.set(file, block);
    }
  }
  // The package's own name resolves to its sources through the repository's tsconfig paths.
  writeFileSync(join(work, 'tsconfig.json'), JSON.stringify({ extends: '../tsconfig.json', include: ['./**/*.ts'] }));
});

after(async () => {
  await lambda?.close();
  rmSync(work, { recursive: true, force: true });
});

describe('docs: TypeScript examples', () => {
  it('there are blocks of every kind the guide shows, and the no-check ones are counted', () => {
    assert.ok(functionBlocks.size >= 3, 'validating, mutating and conversion examples');
    assert.ok(blocks.some(isTest), 'a test example');
    assert.ok(
      blocks.some((b) => /LambdaClient/.test(b.code)),
      'the LambdaClient example',
    );
    const skipped = allBlocks.filter((b) => isTs(b) && noCheck(b)).map((b) => where(b));
    assert.equal(skipped.length, NO_CHECK_BLOCKS, `blocks marked no-check: ${skipped.join(', ') || 'none'}`);
    const readme = blocks.filter((b) => b.doc === 'README.md' && isFunction(b)).map(nameOf);
    assert.equal(readme.length, 4, 'the README shows one function of each kind and a policy');
  });

  it('a function shown on two pages is the same code on both', () => {
    assert.ok(repeated.length >= 3, 'the README shows functions of docs/writing.md');
    for (const [first, again] of repeated)
      assert.equal(again.code, first.code, `${where(again)}: function ${nameOf(again)} differs from ${where(first)}`);
  });

  it('type-check', async () => {
    const tsc = createRequire(import.meta.url).resolve('typescript/bin/tsc');
    const wanted = new Map([...files].map(([file, block]) => [relative(work, file), block.code]));
    wanted.set('tsconfig.json', readFileSync(join(work, 'tsconfig.json'), 'utf8'));
    syncFolder(TSC_WORK, wanted);
    const args = [TYPE_CHECK, join(TSC_WORK, 'tsconfig.json')];
    // What decides the check besides the files tsc reads: a pass is kept while all of it is the same.
    const key = [
      readFileSync(join(dirname(tsc), '..', 'package.json'), 'utf8'),
      readFileSync(TYPE_CHECK, 'utf8'),
      process.version,
      ...args,
      ...['tsconfig.json', 'package.json', 'package-lock.json'].map((f) => readFileSync(join(root, f), 'utf8')),
      ...[...wanted.keys()].sort(),
    ];
    const out = await keptTypeCheck(keptPass(), key, () => run(args));
    const listed = new Set(listedFiles(out.stdout));
    // Point each error at its Markdown line.
    const messages = (out.stdout + out.stderr)
      .split('\n')
      .filter((line) => line && !listed.has(line))
      .join('\n');
    const errors = messages.replace(/^(.*?\.ts)\((\d+),(\d+)\)/gm, (whole, file: string, line: string) => {
      const block = files.get(join(work, relative(TSC_WORK, join(root, file))));
      return block ? `${where(block, Number(line) - 1)} (${whole})` : whole;
    });
    assert.equal(out.code, 0, errors);
  });

  for (const block of blocks.filter(isFunction)) {
    it(`${where(block)}: function ${nameOf(block)} exports its registration as default, and answers a review`, async () => {
      const file = join(await builtFunctions(), 'functions', nameOf(block)!, 'index.mjs');
      const mod = (await import(pathToFileURL(file).href)) as {
        handler?: unknown;
        default?: AdmissionWebhook | ConversionWebhook;
      };
      assert.ok(
        mod.default?.registration,
        'klw reads the registration, and builds the handler, from the default export',
      );
      assert.equal(typeof mod.default.handler, 'function');
      if (mod.handler !== undefined) assert.equal(mod.handler, mod.default.handler);
      const reg = mod.default.registration;
      if (reg.type === 'conversion') {
        const result = await invoke(
          mod.default as ConversionWebhook,
          conversionReview([], `${reg.crd.slice(reg.crd.indexOf('.') + 1)}/v1`),
        );
        assert.equal(result.status, 'Success');
      } else {
        const rule = reg.rules[0]!;
        const kinds: Record<string, string> = { pods: 'Pod', configmaps: 'ConfigMap' };
        const kind = kinds[rule.resources[0]!] ?? 'Object';
        const group = rule.apiGroups[0] === '*' ? '' : rule.apiGroups[0]!;
        const version = rule.apiVersions[0] === '*' ? 'v1' : rule.apiVersions[0]!;
        const object = {
          apiVersion: group ? `${group}/${version}` : version,
          kind,
          metadata: { name: 'docs', namespace: 'default', labels: { team: 'a' } },
          spec: { containers: [{ name: 'app', image: 'nginx:1.25' }] },
        };
        const result = await invoke(
          mod.default as AdmissionWebhook,
          admissionReview(object, { resource: rule.resources[0]! }),
        );
        assert.equal(typeof result.allowed, 'boolean');
      }
    });
  }

  it('the functions load and build as klw does, and the other blocks run against klw local start-lambda', async () => {
    const functions = await loadFunctions(work);
    assert.deepEqual(functions.map((f) => f.name).sort(), [...functionBlocks.keys()].sort());
    lambda = await startLambda({ root: work, port: 0, log: () => {}, invocationTimer: never });
    const scripts = blocks.filter((b) => !isFunction(b) && !isTest(b));
    // The docs' port is the default; this run's emulator listens where it could.
    for (const block of scripts)
      writeFileSync(fileOf(block)!, block.code.replaceAll('http://127.0.0.1:3001', lambda.endpoint));
    const dir = await buildBlocks(
      'docs-scripts',
      scripts.map((block) => fileOf(block)!),
    );
    for (const block of scripts) {
      // Run from the project folder, as a user would (relative paths such as .klw/local resolve there).
      const out = await run(['--enable-source-maps', join(dir, `${entryOf(fileOf(block)!)}.mjs`)], work);
      assert.equal(out.code, 0, `${where(block)}: ${out.stderr}`);
      const expected = [...block.code.matchAll(/console\.log\(.*\);\s*\/\/\s*(.+)$/gm)].map((m) => m[1]!.trim());
      assert.deepEqual(out.stdout.trim().split('\n').filter(Boolean), expected, `${where(block)}: printed output`);
    }
  });

  for (const block of blocks.filter(isTest)) {
    it(`${where(block)}: the test example passes`, async () => {
      const out = await testExamples();
      const result = out.result(where(block));
      assert.equal(result, 'ok', `${where(block)}: ${result ?? 'did not run'}\n${out.stdout}${out.stderr}`);
    });
  }
});

/** Every command's help, by command path ('' for klw itself), from klw's own --help. */
async function klwHelp(): Promise<Map<string, Help>> {
  const helps = new Map<string, Help>();
  for (const [path, text] of await klwHelpTexts()) helps.set(path, parseHelp(text));
  return helps;
}

/** The npm scripts a command may name: this repository's and those of a project `klw init` writes. */
function npmScripts(): Map<string, string> {
  const own = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')) as { scripts: Record<string, string> };
  const project = projectPackageJson('docs', '*').scripts as Record<string, string>;
  return new Map([...Object.entries(project), ...Object.entries(own.scripts)]);
}

/** What is wrong with klw arguments by klw's help (an unknown command, subcommand or option), or undefined. */
function klwProblem(args: string[], helps: Map<string, Help>): string | undefined {
  const global = helps.get('')!.options;
  const path: string[] = [];
  let help = helps.get('')!;
  let rest = args;
  while (rest[0] && help.commands.has(rest[0])) {
    path.push(rest[0]);
    rest = rest.slice(1);
    help = helps.get(path.join(' '))!;
  }
  const command = `klw ${path.join(' ')}`.trim();
  // A placeholder (`klw <command> --help`) stands for any command: nothing more to check.
  if (rest[0] && /^<.+>$/.test(rest[0])) return undefined;
  if (rest[0] && !rest[0].startsWith('-') && (!path.length || help.commands.size))
    return `${command} has no command "${rest[0]}" (it has: ${[...help.commands].join(', ')})`;
  for (const option of optionNames(rest))
    if (!help.options.has(option) && !global.has(option)) return `${command} has no option ${option}`;
  return undefined;
}

/** The commands of a shell block, one per line, continuation lines (`\`, or indented options) joined. */
function shellLines(block: Block): Array<{ line: number; text: string }> {
  const lines: Array<{ line: number; text: string }> = [];
  block.code.split('\n').forEach((text, i) => {
    const last = lines.at(-1);
    if (last && (last.text.endsWith('\\') || /^\s+[[-]/.test(text)))
      last.text = `${last.text.replace(/\\$/, '')} ${text.trim()}`;
    else lines.push({ line: block.line + i, text });
  });
  return lines;
}

describe('docs: commands, data and links', () => {
  let helps: Map<string, Help>;
  before(async () => {
    helps = await klwHelp();
  });

  it('reads klw help, and the check finds unknown commands and options', () => {
    assert.ok(helps.get('')!.commands.has('manifests') && helps.get('local')!.commands.has('start-api'));
    assert.ok(helps.get('local start-api')!.options.has('--port'));
    assert.equal(klwProblem(['local', 'start-api', '[--port', '3443]', '--watch'], helps), undefined);
    assert.equal(
      klwProblem(['local', 'start-api', '--prot', '3443'], helps),
      'klw local start-api has no option --prot',
    );
    assert.match(klwProblem(['local', 'start-apy'], helps)!, /^klw local has no command "start-apy"/);
    assert.match(klwProblem(['deplyo'], helps)!, /^klw has no command "deplyo"/);
    assert.equal(klwProblem(['<command>', '--help'], helps), undefined);
  });

  it('every klw command and npm script in shell blocks and inline code exists, with its options', () => {
    const scripts = npmScripts();
    const problems: string[] = [];
    let checked = 0;
    const check = (at: string, words: string[]) => {
      const inv = invocationOf(words);
      if (!inv) return;
      checked++;
      let args: string[];
      if ('klw' in inv) args = inv.klw;
      else {
        const script = scripts.get(inv.npmScript);
        if (script === undefined) return void problems.push(`${at}: no npm script "${inv.npmScript}"`);
        const klw = /^(?:klw|node infra\/bin\/klw\.mjs)\s+(.*)$/.exec(script);
        if (!klw) return;
        args = [...shellCommands(klw[1]!)[0]!, ...inv.args];
      }
      const problem = klwProblem(args, helps);
      if (problem) problems.push(`${at}: ${problem}`);
    };
    for (const block of allBlocks.filter((b) => b.lang === 'sh'))
      for (const { line, text } of shellLines(block))
        for (const words of shellCommands(text)) check(`${block.doc}:${line}`, words);
    for (const doc of docs)
      for (const { line, code } of inlineCode(prose(text.get(doc)!)))
        for (const words of shellCommands(code)) check(`${doc}:${line}`, words);
    assert.ok(checked > 100, `only ${checked} commands found`);
    assert.deepEqual(problems, []);
  });

  it("every --option in the text's inline code is one of klw's, or of the few other tools named", () => {
    const klwOptions = new Set([...helps.values()].flatMap((h) => [...h.options]));
    const unknown: string[] = [];
    for (const doc of docs)
      for (const { line, code } of inlineCode(prose(text.get(doc)!)))
        for (const m of code.matchAll(/(?:^|[\s[(])(--[a-z][\w-]*)/g))
          if (!klwOptions.has(m[1]!) && !OTHER_TOOLS_OPTIONS.has(m[1]!)) unknown.push(`${doc}:${line}: ${m[1]}`);
    assert.deepEqual(unknown, []);
  });

  it("every repository path in the text's inline code exists", () => {
    const missing: string[] = [];
    let checked = 0;
    for (const doc of docs)
      for (const { line, code } of inlineCode(prose(text.get(doc)!)))
        for (const m of code.matchAll(REPOSITORY_PATH)) {
          const path = m[1]!.replace(/[.,:;]$/, '');
          if (GENERATED.has(path)) continue;
          // `functions/<name>/index.ts`, `etc/*.api.md`: the folder before the placeholder exists.
          const fixed = /[<*]/.test(path) ? path.split(/[<*]/)[0]!.replace(/[^/]*$/, '') : path;
          checked++;
          if (!existsSync(join(root, fixed))) missing.push(`${doc}:${line}: ${path}`);
        }
    assert.ok(checked > 30, `only ${checked} paths found`);
    assert.deepEqual(missing, []);
  });

  it('every block names a language, and the YAML and JSON blocks parse', () => {
    const known = new Set(['ts', 'typescript', 'sh', 'yaml', 'json', 'text']);
    for (const block of allBlocks) {
      assert.ok(known.has(block.lang), `${where(block, -1)}: a block of language "${block.lang}"`);
      if (block.lang === 'json') assert.doesNotThrow(() => JSON.parse(block.code), where(block));
      if (block.lang === 'yaml')
        for (const d of parseAllDocuments(block.code) as Array<{ errors: unknown[] }>)
          assert.deepEqual(d.errors, [], where(block));
    }
  });

  it('the clusters.yaml example is a fleet file klw accepts', () => {
    const examples = allBlocks.filter((b) => b.lang === 'yaml' && /^clusters:/m.test(b.code));
    assert.ok(examples.length >= 1, 'a clusters.yaml example');
    for (const block of examples) {
      const fleet = parseFleet(block.code, 'clusters.yaml', [{ name: 'pod-policy', type: 'validating' }]);
      assert.ok(fleet.clusters.length >= 1, where(block));
    }
  });

  it('every relative link points to a file, and a heading, that exist', () => {
    const broken: string[] = [];
    for (const doc of docs)
      for (const { line, target } of relativeLinks(prose(text.get(doc)!))) {
        const [path, anchor] = target.split('#') as [string, string | undefined];
        const file = path ? join(dirname(join(root, doc)), path) : join(root, doc);
        if (!existsSync(file)) broken.push(`${doc}:${line}: ${target}: no such file`);
        else if (anchor !== undefined && file.endsWith('.md') && !anchors(readFileSync(file, 'utf8')).has(anchor))
          broken.push(`${doc}:${line}: ${target}: no such heading`);
      }
    assert.deepEqual(broken, []);
  });

  it('the README is short and leads to every page', () => {
    const readme = text.get('README.md')!;
    // A newcomer's five minutes; the pages hold the rest.
    assert.ok(Buffer.byteLength(readme) < 12 * 1024, `README.md is ${Buffer.byteLength(readme)} bytes`);
    assert.match(readme, /^```sh\nnpm install && npm start .*\nnpm test /m, 'it starts with the two commands');
    const linked = new Set(relativeLinks(readme).map((l) => l.target.split('#')[0]));
    for (const page of docs.filter((d) => d !== 'README.md')) assert.ok(linked.has(page), `README.md links to ${page}`);
  });
});

describe('docs: the Markdown readers', () => {
  it('find blocks with their flags and lines, and refuse an unclosed one', () => {
    const md = 'text\n\n  ```ts no-check\n  const a = 1;\n  ```\n```sh\nklw build\n```\n';
    assert.deepEqual(fencedBlocks('x.md', md), [
      { doc: 'x.md', lang: 'ts', flags: ['no-check'], line: 4, code: 'const a = 1;\n' },
      { doc: 'x.md', lang: 'sh', flags: [], line: 7, code: 'klw build\n' },
    ]);
    assert.throws(() => fencedBlocks('x.md', '```ts\nconst a = 1;\n'), /x\.md:1: unclosed code block/);
  });

  it('find links, anchors and commands', () => {
    assert.deepEqual(relativeLinks('[a](docs/x.md#y) [b](https://e.x) [c](#z)'), [
      { line: 1, target: 'docs/x.md#y' },
      { line: 1, target: '#z' },
    ]);
    // A regular expression in a code span holds `](` without being a link.
    assert.deepEqual(relativeLinks("`matches('^[a-z]([-a-z]*)?$')`\n[d](#w)"), [{ line: 2, target: '#w' }]);
    assert.deepEqual(
      [...anchors('# A b\n## Numbers: int64 beyond 2^53\n## A b\n```\n# no\n```')],
      ['a-b', 'numbers-int64-beyond-253', 'a-b-1'],
    );
    assert.deepEqual(shellCommands(`X=1 npx klw logs p --since '10m' | jq . # a comment`), [
      ['X=1', 'npx', 'klw', 'logs', 'p', '--since', '10m'],
      ['jq', '.'],
    ]);
    assert.deepEqual(invocationOf(['X=1', 'npx', '--yes', 'klw', 'build']), { klw: ['build'] });
    assert.deepEqual(invocationOf(['npm', 'start', '--', '--apply']), { npmScript: 'start', args: ['--apply'] });
    assert.deepEqual(optionNames(['[--port', '3443]', '--node=24', '-o', 'a|b', '--as-group', 'G…]', '--']), [
      '--port',
      '--node',
      '-o',
      '--as-group',
    ]);
  });
});
