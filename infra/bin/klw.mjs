#!/usr/bin/env node
// The klw command: loads TypeScript sources (functions and infra) through tsx.
import { register } from 'tsx/esm/api';

register();
const { main } = await import('../cli.ts');
process.exitCode = await main(process.argv);
