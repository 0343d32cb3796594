#!/usr/bin/env node
// The klw command. Installed from the npm package it runs the compiled JavaScript in pkg/ and
// needs no TypeScript tooling (functions are transpiled with esbuild). In a checkout of the
// repository it runs the TypeScript sources through tsx (tsconfig.json maps this package's
// name to its sources).
import { existsSync } from 'node:fs';

const source = new URL('../cli.ts', import.meta.url);
let cli;
if (existsSync(source)) {
  const { register } = await import('tsx/esm/api');
  register();
  cli = await import(source.href);
} else {
  cli = await import('../../pkg/infra/cli.js');
}
process.exitCode = await cli.main(process.argv);
