// Prints the `--help` text of klw and of every command and subcommand, each after a line
// `=== <command path>`, by running klw's own entry point (`main`) in this one process: the
// docs test reads which commands and options exist from it.
import { main } from '../../infra/cli.ts';

/** The command names listed under `Commands:` in a help text. */
function subcommands(help: string): string[] {
  const at = help.indexOf('\nCommands:\n');
  if (at < 0) return [];
  return [...help.slice(at).matchAll(/^ {2}([\w-]+)/gm)].map((m) => m[1]!).filter((c) => c !== 'help');
}

/** Runs `klw <path> --help` and returns what it wrote to stdout. */
async function helpOf(path: string[]): Promise<string> {
  const chunks: string[] = [];
  const write = process.stdout.write.bind(process.stdout);
  process.stdout.write = ((chunk: string | Uint8Array) => {
    chunks.push(String(chunk));
    return true;
  }) as typeof process.stdout.write;
  try {
    await main(['node', 'klw', ...path, '--help']);
  } finally {
    process.stdout.write = write;
  }
  return chunks.join('');
}

const queue: string[][] = [[]];
while (queue.length) {
  const path = queue.shift()!;
  const help = await helpOf(path);
  process.stdout.write(`=== ${path.join(' ')}\n${help}\n`);
  for (const sub of subcommands(help)) queue.push([...path, sub]);
}
