// The `--help` text of klw and of every command and subcommand, by running klw's own entry point
// (`main`) in this process: the docs test reads which commands and options exist from it.
import { klwInProcess } from '../helpers.ts';

/** The command names listed under `Commands:` in a help text. */
function subcommands(help: string): string[] {
  const at = help.indexOf('\nCommands:\n');
  if (at < 0) return [];
  return [...help.slice(at).matchAll(/^ {2}([\w-]+)/gm)].map((m) => m[1]!).filter((c) => c !== 'help');
}

/** What `klw <path> --help` writes to stdout, by command path ('' for klw itself). */
export async function klwHelpTexts(): Promise<Map<string, string>> {
  const texts = new Map<string, string>();
  const queue: string[][] = [[]];
  while (queue.length) {
    const path = queue.shift()!;
    const { code, stdout, stderr } = await klwInProcess(...path, '--help');
    if (code !== 0) throw new Error(`klw ${path.join(' ')} --help exited ${code}: ${stderr}`);
    texts.set(path.join(' '), stdout);
    for (const sub of subcommands(stdout)) queue.push([...path, sub]);
  }
  return texts;
}
