#!/usr/bin/env node
// Compiles the package for `npm pack` (the prepack script): lib/ and infra/ to ES modules with
// .d.ts types in pkg/, plus the files the code reads next to itself (templates, worker.mjs).
// Whatever lib/ and infra/ hold at pack time goes in; tests and this folder do not.
import { execFileSync } from 'node:child_process';
import { cpSync, existsSync, mkdirSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { dirname, join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = fileURLToPath(new URL('../../', import.meta.url));
const out = join(root, 'pkg');
/** Folders compiled into the package. */
const SOURCES = ['lib', 'infra'];
/** Folders left out: this build step, the e2e cluster scripts and the bin (shipped as it is). */
const SKIP = new Set(['infra/pack', 'infra/e2e', 'infra/bin']);
/** Copied as they are: what the code reads at run time beside its own file. */
const isAsset = (file) => !file.endsWith('.ts') && !file.endsWith('.test.mjs');

function walk(dir, visit) {
  for (const name of readdirSync(join(root, dir))) {
    const rel = `${dir}/${name}`;
    if (SKIP.has(rel)) continue;
    if (statSync(join(root, rel)).isDirectory()) walk(rel, visit);
    else visit(rel);
  }
}

rmSync(out, { recursive: true, force: true });
const tsc = join(root, 'node_modules', 'typescript', 'bin', 'tsc');
execFileSync(process.execPath, [tsc, '-p', join(root, 'tsconfig.build.json')], { stdio: 'inherit', cwd: root });

let assets = 0;
let declarations = 0;
for (const dir of SOURCES) {
  walk(dir, (rel) => {
    if (isAsset(rel)) {
      mkdirSync(dirname(join(out, rel)), { recursive: true });
      cpSync(join(root, rel), join(out, rel));
      assets++;
    }
  });
}
// tsc rewrites `./x.ts` to `./x.js` in JavaScript but not in declarations; users' tsc needs `.js`.
const RELATIVE_TS = /((?:from|import)\s*\(?\s*['"])(\.{1,2}\/[^'"]+)\.ts(['"])/g;
// Node's globals in a declaration (Buffer, NodeJS.*) need @types/node (a dependency) loaded even
// when the user's tsconfig lists `types` without it.
const NODE_GLOBALS = /\b(?:Buffer|NodeJS\.)/;
const NODE_REFERENCE = '/// <reference types="node" />\n';
(function rewrite(dir) {
  for (const name of readdirSync(dir)) {
    const file = join(dir, name);
    if (statSync(file).isDirectory()) rewrite(file);
    else if (name.endsWith('.d.ts')) {
      const text = readFileSync(file, 'utf8');
      let fixed = text.replace(RELATIVE_TS, '$1$2.js$3');
      if (NODE_GLOBALS.test(fixed) && !fixed.includes(NODE_REFERENCE)) fixed = NODE_REFERENCE + fixed;
      if (fixed !== text) writeFileSync(file, fixed);
      declarations++;
    }
  }
})(out);
if (!existsSync(join(out, 'lib', 'index.js')) || !existsSync(join(out, 'infra', 'cli.js')))
  throw new Error('pkg/ lacks lib/index.js or infra/cli.js');
process.stdout.write(`pkg/: ${declarations} declaration files, ${assets} assets copied (${relative(root, out)})\n`);
