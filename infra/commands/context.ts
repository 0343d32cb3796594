import type { Command } from 'commander';
import type { runServerless } from '../deploy/index.ts';
import type { applyNodeOption } from '../node-binary.ts';

/** What commands run outside this process, for tests to replace; each defaults to the real one. */
export interface CliDeps {
  /** Runs the Serverless Framework CLI (`klw deploy`). */
  runServerless?: typeof runServerless;
  /** Runs the command again on the Node that `--node` names (klw's own argv passed in). */
  applyNodeOption?: typeof applyNodeOption;
}

/** What every command gets from the program that assembles them. */
export interface CommandContext {
  /** The project folder (`--root`, default the current folder), resolved. */
  root: () => string;
  /** Writes a line of progress to stderr. */
  say: (line: string) => void;
  /** Runs the Serverless Framework CLI. */
  runServerless: typeof runServerless;
}

/** How each module of infra/commands adds its command(s) to the program. */
export type RegisterCommand = (cli: Command, context: CommandContext) => void;

/** Progress and findings go to stderr, so stdout carries only the requested output. */
export function say(line: string): void {
  process.stderr.write(`${line}\n`);
}
