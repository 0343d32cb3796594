import { resolve } from 'node:path';
import { Command, CommanderError } from 'commander';
import * as audit from './commands/audit.ts';
import * as authConfig from './commands/auth-config.ts';
import * as build from './commands/build.ts';
import { say, type CliDeps, type CommandContext, type RegisterCommand } from './commands/context.ts';
import * as deploy from './commands/deploy.ts';
import * as init from './commands/init.ts';
import * as lint from './commands/lint.ts';
import * as local from './commands/local.ts';
import * as logs from './commands/logs.ts';
import * as manifests from './commands/manifests.ts';
import * as newFunction from './commands/new.ts';
import * as secret from './commands/secret.ts';
import * as smoke from './commands/smoke.ts';
import * as start from './commands/start.ts';
import * as test from './commands/test.ts';
import { readServerless, runServerless } from './deploy/index.ts';
import { describeThrown, isInstance, KlwError } from './errors.ts';
import { applyNodeOption, RanElsewhere } from './node-binary.ts';
import { packageInfo } from './version.ts';

export type { CliDeps } from './commands/context.ts';

/** The command modules, in the order `klw --help` lists them; each adds its command(s) to the program. */
const COMMANDS: { register: RegisterCommand }[] = [
  build,
  manifests,
  lint,
  audit,
  newFunction,
  init,
  test,
  authConfig,
  deploy,
  secret,
  logs,
  smoke,
  local,
  start,
];

/** The arguments klw was run with, for `--node` to run the same command again. */
let invokedArgv: string[] = process.argv;

/** Builds the klw program. */
export function program(deps: CliDeps = {}): Command {
  const cli = new Command('klw')
    .description('Kubernetes admission and conversion webhooks as AWS Lambda functions')
    .option('--root <dir>', 'project folder (holds functions/)', process.cwd())
    .version(packageInfo().version, '-V, --version', 'print the version of kube-lambda-webhooks')
    .showHelpAfterError()
    .exitOverride();
  const root = () => resolve(cli.opts<{ root: string }>().root);
  // --node (local commands, test): the command runs again on that Node, installed when missing.
  cli.hook('preAction', async (_program, command) =>
    applyNodeOption(command.opts<{ node?: string }>().node, invokedArgv, root(), say),
  );
  const context: CommandContext = {
    root,
    say,
    config: () => readServerless(root()),
    runServerless: deps.runServerless ?? runServerless,
  };
  for (const command of COMMANDS) command.register(cli, context);
  return cli;
}

/** A thrown value's stack, else its description. */
function describeStack(value: unknown): string {
  try {
    const stack = (value as { stack?: unknown }).stack;
    if (typeof stack === 'string') return stack;
  } catch {
    // described below
  }
  return describeThrown(value);
}

/**
 * Runs klw with argv; returns the exit code: a KlwError's own, else 1. Failures print one line,
 * never a stack (KLW_DEBUG adds the stack, and that of the error it wraps).
 */
export async function main(argv: string[], deps: CliDeps = {}): Promise<number> {
  invokedArgv = argv;
  try {
    await program(deps).parseAsync(argv);
    return 0;
  } catch (err) {
    // Whatever was thrown (a Proxy whose every read throws, an object without a prototype, a
    // Symbol), reading it here must not throw in turn: each look at it is guarded.
    if (isInstance(err, CommanderError) || isInstance(err, RanElsewhere)) return (err as { exitCode: number }).exitCode;
    say(`klw: ${describeThrown(err)}`);
    if (process.env.KLW_DEBUG && isInstance(err, Error)) {
      say(describeStack(err));
      const cause = (() => {
        try {
          return (err as Error).cause;
        } catch {
          return undefined;
        }
      })();
      if (cause !== undefined) say(`caused by: ${describeStack(cause)}`);
    }
    return isInstance(err, KlwError) ? (err as KlwError).exitCode : 1;
  }
}
