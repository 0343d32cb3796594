#!/usr/bin/env node
// The klw command. Installed from the npm package it runs the compiled JavaScript in pkg/ and
// needs no TypeScript tooling (functions are transpiled with esbuild). In a checkout of the
// repository it runs the toolkit built into JavaScript once, and again whenever a source changed
// (infra/build-cache.mjs), or, when that build fails, the TypeScript sources through tsx, which
// reports the error (tsconfig.json maps this package's name to its sources).
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';

const source = new URL('../cli.ts', import.meta.url);

/** The built command line, or undefined when it cannot be built. */
async function built() {
  try {
    const { cachedBuild } = await import('../build-cache.mjs');
    const { dir } = await cachedBuild();
    // Stack traces name the sources, as they do under tsx.
    process.setSourceMapsEnabled(true);
    return await import(pathToFileURL(join(dir, 'cli.mjs')).href);
  } catch {
    return undefined;
  }
}

let cli;
if (existsSync(source)) {
  cli = await built();
  if (!cli) {
    const { register } = await import('tsx/esm/api');
    register();
    cli = await import(source.href);
  }
} else {
  cli = await import('../../pkg/infra/cli.js');
}
process.exitCode = await cli.main(process.argv);
