import { resolve } from 'node:path';
import { Command, CommanderError } from 'commander';
import { say, type CliDeps, type CommandContext, type RegisterCommand } from './commands/context.ts';
import { describeThrown, isInstance, KlwError } from './errors.ts';
import { packageInfo } from './version.ts';

export type { CliDeps } from './commands/context.ts';

/** A command module: it adds its command(s) to the program. */
type CommandModule = { register: RegisterCommand };

/**
 * The command modules by command name, in the order `klw --help` lists them. Each is imported
 * only when needed: `klw <command>` imports that command's module alone, so it loads only the
 * code that command runs; help of the program as a whole, or a name klw does not know, all of them.
 */
const COMMANDS: Record<string, () => Promise<CommandModule>> = {
  build: () => import('./commands/build.ts'),
  manifests: () => import('./commands/manifests.ts'),
  lint: () => import('./commands/lint.ts'),
  audit: () => import('./commands/audit.ts'),
  new: () => import('./commands/new.ts'),
  init: () => import('./commands/init.ts'),
  test: () => import('./commands/test.ts'),
  'auth-config': () => import('./commands/auth-config.ts'),
  deploy: () => import('./commands/deploy.ts'),
  secret: () => import('./commands/secret.ts'),
  logs: () => import('./commands/logs.ts'),
  smoke: () => import('./commands/smoke.ts'),
  local: () => import('./commands/local.ts'),
  start: () => import('./commands/start.ts'),
};

/** The options of the program itself that take a value (the next argument, unless given as `--opt=value`). */
const PROGRAM_OPTIONS_WITH_VALUE = new Set(['--root']);

/**
 * The names of the commands whose modules `argv` needs: the command it runs when klw knows it
 * (`klw help <command>` included), none for the version, all of them for the program's own help
 * or a name klw does not know (whose error suggests the names it knows).
 */
export function commandsFor(argv: string[]): string[] {
  const all = Object.keys(COMMANDS);
  const args = argv.slice(2);
  for (let i = 0; i < args.length; i++) {
    const arg = args[i]!;
    if (arg === '-V' || arg === '--version') return [];
    if (PROGRAM_OPTIONS_WITH_VALUE.has(arg)) i++;
    else if (!arg.startsWith('-')) {
      const name = arg === 'help' ? args[i + 1] : arg;
      return name !== undefined && Object.hasOwn(COMMANDS, name) ? [name] : all;
    } else if (!arg.startsWith('--root=')) return all;
  }
  return all;
}

/** The Node installer (`--node`), imported when a run needs it; a run that threw RanElsewhere has. */
function nodeBinary(): Promise<typeof import('./node-binary.ts')> {
  nodeBinaryLoaded = true;
  return import('./node-binary.ts');
}
let nodeBinaryLoaded = false;

/** The command modules imported so far, by name: a program built again (tests run main many times) reuses them. */
const loaded = new Map<string, CommandModule>();

/**
 * The command modules `argv` needs (commandsFor), all of them without it. Those imported before
 * are at hand at once: only a first import waits (and lets other work run meanwhile).
 */
async function commandModules(argv?: string[]): Promise<CommandModule[]> {
  const names = argv ? commandsFor(argv) : Object.keys(COMMANDS);
  const missing = names.filter((name) => !loaded.has(name));
  if (missing.length) {
    const modules = await Promise.all(missing.map((name) => COMMANDS[name]!()));
    for (const [i, name] of missing.entries()) loaded.set(name, modules[i]!);
  }
  return names.map((name) => loaded.get(name)!);
}

/**
 * Builds the klw program: all its commands, or those `argv` needs when given. `argv` (else
 * process.argv) is also what `--node` runs again: each run's own, so runs in one process may overlap.
 */
export async function program(deps: CliDeps = {}, argv?: string[]): Promise<Command> {
  const invoked = argv ?? process.argv;
  const modules = await commandModules(argv);
  const cli = new Command('klw')
    .description('Kubernetes admission and conversion webhooks as AWS Lambda functions')
    .option('--root <dir>', 'project folder (holds functions/)', process.cwd())
    .version(packageInfo().version, '-V, --version', 'print the version of kube-lambda-webhooks')
    .showHelpAfterError()
    .exitOverride();
  const root = () => resolve(cli.opts<{ root: string }>().root);
  // --node (local commands, test): the command runs again on that Node, installed when missing.
  // Without it nothing runs elsewhere, and the installer is not loaded.
  cli.hook('preAction', async (_program, command) => {
    const node = command.opts<{ node?: string }>().node;
    if (node === undefined && !deps.applyNodeOption) return;
    const apply = deps.applyNodeOption ?? (await nodeBinary()).applyNodeOption;
    await apply(node, invoked, root(), say);
  });
  const context: CommandContext = {
    root,
    say,
    runServerless:
      deps.runServerless ?? (async (...args) => (await import('./deploy/index.ts')).runServerless(...args)),
  };
  for (const command of modules) command.register(cli, context);
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
  try {
    await (await program(deps, argv)).parseAsync(argv);
    return 0;
  } catch (err) {
    // Whatever was thrown (a Proxy whose every read throws, an object without a prototype, a
    // Symbol), reading it here must not throw in turn: each look at it is guarded.
    if (isInstance(err, CommanderError)) return (err as CommanderError).exitCode;
    if ((nodeBinaryLoaded || deps.applyNodeOption) && isInstance(err, (await nodeBinary()).RanElsewhere))
      return (err as { exitCode: number }).exitCode;
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
