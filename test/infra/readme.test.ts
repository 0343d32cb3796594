// Every TypeScript block in README.md is checked as a user would use it: each is written into a
// scratch project inside this repository (so `kube-lambda-webhooks` resolves as it does for
// functions here), the project is type-checked with tsc, function blocks are loaded, built and
// answer a review, test blocks pass under node --test, and the other blocks run as scripts
// against `klw local start-lambda`, their `console.log(...); // expected` lines compared.
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join, relative } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { after, before, describe, it } from 'node:test';
import { loadFunctions } from '../../infra/functions.ts';
import { startLambda, type RunningLambda } from '../../infra/local/lambda-api.ts';
import type { AdmissionWebhook } from '../../lib/admission/webhook.ts';
import type { ConversionWebhook } from '../../lib/conversion/webhook.ts';
import { admissionReview, conversionReview } from '../../lib/testing/index.ts';
import { invoke } from '../../lib/testing/index.ts';
import { ManualTimer } from '../helpers.ts';

/** The functions' timeouts never run out: a cold start on a loaded machine takes as long as it takes. */
const never = new ManualTimer().timer;

const root = fileURLToPath(new URL('../../', import.meta.url));
const readme = readFileSync(join(root, 'README.md'), 'utf8');

/** A fenced TypeScript block: its first code line in README.md and its code, list indentation removed. */
interface Block {
  line: number;
  code: string;
}

/** The ```ts / ```typescript blocks of a Markdown text. */
export function typescriptBlocks(markdown: string): Block[] {
  const blocks: Block[] = [];
  const lines = markdown.split('\n');
  for (let i = 0; i < lines.length; i++) {
    const open = /^(\s*)```(ts|typescript)\s*$/.exec(lines[i]!);
    if (!open) continue;
    const indent = open[1]!.length;
    const body: string[] = [];
    let j = i + 1;
    for (; j < lines.length && !/^\s*```\s*$/.test(lines[j]!); j++)
      body.push(lines[j]!.slice(Math.min(indent, lines[j]!.length - lines[j]!.trimStart().length)));
    assert.ok(j < lines.length, `README.md:${i + 1}: unclosed code block`);
    blocks.push({ line: i + 2, code: `${body.join('\n')}\n` });
    i = j;
  }
  return blocks;
}

const blocks = typescriptBlocks(readme);
const isFunction = (b: Block) =>
  /\bdefine(Validating|Mutating|Conversion)Webhook\s*[<(]/.test(b.code) && /export default/.test(b.code);
const isTest = (b: Block) => /from 'node:test'/.test(b.code);
const nameOf = (b: Block) => /\bname:\s*'([a-z0-9-]+)'/.exec(b.code)?.[1];

const work = mkdtempSync(join(root, '.klw-test-readme-'));
/** Where each block was written, to map tsc's positions back to README lines. */
const files = new Map<string, Block>();
let lambda: RunningLambda | undefined;

function run(args: string[], cwd = root): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    execFile(
      process.execPath,
      args,
      { cwd, encoding: 'utf8', env: { ...process.env, NODE_TEST_CONTEXT: undefined } },
      (err, stdout, stderr) =>
        resolve({ code: err ? Number((err as { code?: number }).code ?? 1) : 0, stdout, stderr }),
    );
  });
}

before(() => {
  for (const block of blocks) {
    let file: string;
    if (isFunction(block)) {
      const name = nameOf(block);
      assert.ok(name, `README.md:${block.line}: a function block names its function`);
      file = join(work, 'functions', name, 'index.ts');
      assert.ok(![...files.keys()].includes(file), `README.md:${block.line}: function ${name} is defined twice`);
    } else {
      // Two folders deep, so `../../functions/<name>/index.ts` finds the README's functions.
      file = join(work, 'test', 'readme', `line-${block.line}${isTest(block) ? '.test' : ''}.ts`);
    }
    mkdirSync(dirname(file), { recursive: true });
    writeFileSync(file, block.code);
    files.set(file, block);
  }
  // The package's own name resolves to its sources through the repository's tsconfig paths.
  writeFileSync(join(work, 'tsconfig.json'), JSON.stringify({ extends: '../tsconfig.json', include: ['./**/*.ts'] }));
});

after(async () => {
  await lambda?.close();
  rmSync(work, { recursive: true, force: true });
});

describe('README.md TypeScript blocks', () => {
  it('there are blocks of every kind the guide shows', () => {
    assert.ok(blocks.filter(isFunction).length >= 3, 'validating, mutating and conversion examples');
    assert.ok(blocks.some(isTest), 'a test example');
    assert.ok(
      blocks.some((b) => /LambdaClient/.test(b.code)),
      'the LambdaClient example',
    );
  });

  it('type-check', async () => {
    const tsc = createRequire(import.meta.url).resolve('typescript/bin/tsc');
    const out = await run([tsc, '--noEmit', '-p', join(work, 'tsconfig.json')]);
    // Point each error at its README line.
    const errors = (out.stdout + out.stderr).replace(
      /^(.*?\.ts)\((\d+),(\d+)\)/gm,
      (whole, file: string, line: string) => {
        const block = files.get(join(root, file)) ?? files.get(join(work, relative(work, join(root, file))));
        return block ? `README.md:${block.line + Number(line) - 1} (${whole})` : whole;
      },
    );
    assert.equal(out.code, 0, errors);
  });

  for (const block of blocks.filter(isFunction)) {
    it(`README.md:${block.line}: function ${nameOf(block)} exports its registration as default, and answers a review`, async () => {
      const file = [...files].find(([, b]) => b === block)![0];
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
          metadata: { name: 'readme', namespace: 'default', labels: { team: 'a' } },
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
    assert.deepEqual(functions.map((f) => f.name).sort(), blocks.filter(isFunction).map(nameOf).sort());
    lambda = await startLambda({ root: work, port: 0, log: () => {}, invocationTimer: never });
    for (const block of blocks.filter((b) => !isFunction(b) && !isTest(b))) {
      const file = [...files].find(([, b]) => b === block)![0];
      // The README's port is the default; this run's emulator listens where it could.
      writeFileSync(file, block.code.replaceAll('http://127.0.0.1:3001', lambda.endpoint));
      // Run from the project folder, as a user would (relative paths such as .klw/local resolve there).
      const out = await run(['--import', 'tsx', file], work);
      assert.equal(out.code, 0, `README.md:${block.line}: ${out.stderr}`);
      const expected = [...block.code.matchAll(/console\.log\(.*\);\s*\/\/\s*(.+)$/gm)].map((m) => m[1]!.trim());
      assert.deepEqual(
        out.stdout.trim().split('\n').filter(Boolean),
        expected,
        `README.md:${block.line}: printed output`,
      );
    }
  });

  for (const block of blocks.filter(isTest)) {
    it(`README.md:${block.line}: the test example passes`, async () => {
      const file = [...files].find(([, b]) => b === block)![0];
      const out = await run(['--import', 'tsx', '--test', '--test-reporter=tap', file]);
      assert.equal(out.code, 0, out.stdout + out.stderr);
      assert.match(out.stdout, /^# pass [1-9]/m);
      assert.match(out.stdout, /^# fail 0$/m);
    });
  }
});
