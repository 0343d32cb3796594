// What `klw test` runs for a TypeScript test file that loads TypeScript at run time (see
// NEEDS_TSX in infra/test-build.ts): the source file through tsx, in a process of its own that
// inherits this one's Node options, environment and output, so node --test reads its results as
// if it were this file's. Plain JavaScript: node --test runs it without a TypeScript loader.
import { spawn } from 'node:child_process';

/** The signals passed on to the file's process, so that stopping the run stops it too. */
const FORWARDED = ['SIGINT', 'SIGTERM', 'SIGHUP'];

/** Runs `source` through tsx with this process's Node options; this process exits as it does. */
export function runThroughTsx(source) {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, [...process.execArgv, '--import', 'tsx', source], { stdio: 'inherit' });
    const forward = (signal) => child.kill(signal);
    for (const signal of FORWARDED) process.on(signal, forward);
    child.on('error', (error) => {
      process.stderr.write(`${source}: ${error.message}\n`);
      process.exitCode = 1;
      resolve();
    });
    child.on('exit', (code, signal) => {
      for (const s of FORWARDED) process.off(s, forward);
      process.exitCode = code ?? (signal ? 1 : 0);
      resolve();
    });
  });
}
