// Reading the project's Markdown for the docs test: fenced blocks, inline code, links, heading
// anchors, and the klw and npm commands shell text names.

/** A fenced code block: its language, the words after it, its first code line, its code. */
export interface Block {
  /** The Markdown file, relative to the repository (`docs/writing.md`). */
  doc: string;
  lang: string;
  /** Words after the language (`no-check`). */
  flags: string[];
  /** The 1-based line of the block's first code line. */
  line: number;
  /** The code, the fence's indentation (a block inside a list item) removed. */
  code: string;
}

/** The fenced code blocks of a Markdown text; an unclosed fence is an error naming its line. */
export function fencedBlocks(doc: string, markdown: string): Block[] {
  const blocks: Block[] = [];
  const lines = markdown.split('\n');
  for (let i = 0; i < lines.length; i++) {
    const open = /^(\s*)```(\S*)\s*(.*)$/.exec(lines[i]!);
    if (!open) continue;
    const indent = open[1]!.length;
    const body: string[] = [];
    let j = i + 1;
    for (; j < lines.length && !/^\s*```\s*$/.test(lines[j]!); j++)
      body.push(lines[j]!.slice(Math.min(indent, lines[j]!.length - lines[j]!.trimStart().length)));
    if (j >= lines.length) throw new Error(`${doc}:${i + 1}: unclosed code block`);
    const flags = open[3]!.trim().split(/\s+/).filter(Boolean);
    blocks.push({ doc, lang: open[2]!, flags, line: i + 2, code: `${body.join('\n')}\n` });
    i = j;
  }
  return blocks;
}

/** The text outside fenced blocks, fenced lines blanked so line numbers still count. */
export function prose(markdown: string): string {
  let fenced = false;
  return markdown
    .split('\n')
    .map((line) => {
      const fence = /^\s*```/.test(line);
      if (fence) fenced = !fenced;
      return fence || fenced ? '' : line;
    })
    .join('\n');
}

/** Inline code spans of prose, with their line, white space (line breaks included) collapsed. */
export function inlineCode(text: string): Array<{ line: number; code: string }> {
  const spans: Array<{ line: number; code: string }> = [];
  for (const m of text.matchAll(/(?<!`)`([^`]+)`(?!`)/g)) {
    const line = text.slice(0, m.index).split('\n').length;
    spans.push({ line, code: m[1]!.replace(/\s+/g, ' ').trim() });
  }
  return spans;
}

/** Relative link targets of prose (`docs/x.md#anchor`, `#anchor`), with their line; URLs left out. */
export function relativeLinks(text: string): Array<{ line: number; target: string }> {
  const links: Array<{ line: number; target: string }> = [];
  // Inside a code span `](` is text, not a link: blanked out, lines kept.
  const prose = text.replace(/(?<!`)`([^`]+)`(?!`)/g, (span) => span.replace(/[^\n]/g, ' '));
  for (const m of prose.matchAll(/\]\(([^)\s]+)\)/g)) {
    if (/^[a-z][a-z0-9+.-]*:/i.test(m[1]!)) continue;
    links.push({ line: prose.slice(0, m.index).split('\n').length, target: m[1]! });
  }
  return links;
}

/** The anchor GitHub gives a heading: lower case, punctuation dropped, spaces as dashes. */
export function slug(heading: string): string {
  return heading
    .trim()
    .toLowerCase()
    .replace(/[^\p{L}\p{M}\p{N}\p{Pc} -]/gu, '')
    .replace(/ /g, '-');
}

/** The anchors of a Markdown text's headings; a repeated heading gets `-1`, `-2`, … as on GitHub. */
export function anchors(markdown: string): Set<string> {
  const seen = new Map<string, number>();
  const found = new Set<string>();
  for (const line of prose(markdown).split('\n')) {
    const heading = /^#{1,6}\s+(.+?)\s*#*\s*$/.exec(line);
    if (!heading) continue;
    const base = slug(heading[1]!);
    const n = seen.get(base) ?? 0;
    seen.set(base, n + 1);
    found.add(n ? `${base}-${n}` : base);
  }
  return found;
}

/** Splits a shell line into simple commands (on `&&`, `||`, `|`, `;`, `&`) of words, quotes kept out. */
export function shellCommands(line: string): string[][] {
  const commands: string[][] = [[]];
  let word = '';
  let quote = '';
  let inWord = false;
  const end = () => {
    if (inWord) commands.at(-1)!.push(word);
    word = '';
    inWord = false;
  };
  for (let i = 0; i < line.length; i++) {
    const c = line[i]!;
    if (quote) {
      if (c === quote) quote = '';
      else word += c;
    } else if (c === "'" || c === '"') {
      quote = c;
      inWord = true;
    } else if (c === '#' && !inWord) break;
    else if (/\s/.test(c)) end();
    else if ('&|;'.includes(c)) {
      end();
      if (line[i + 1] === c) i++;
      commands.push([]);
    } else {
      word += c;
      inWord = true;
    }
  }
  end();
  return commands.filter((c) => c.length);
}

/** What a shell command asks of this package: klw's arguments, or an npm script's name. */
export type Invocation = { klw: string[] } | { npmScript: string; args: string[] };

/**
 * The klw invocation or npm script a simple command is (`npx klw …`, `klw …`,
 * `node infra/bin/klw.mjs …`, `npx --package X klw …`, `npm start -- …`, `npm run x`), after any
 * `NAME=value` prefixes; undefined for any other command.
 */
export function invocationOf(words: string[]): Invocation | undefined {
  let w = words;
  while (w.length && /^[A-Za-z_][A-Za-z0-9_]*=/.test(w[0]!)) w = w.slice(1);
  const afterSeparator = (rest: string[]) => (rest[0] === '--' ? rest.slice(1) : rest);
  if (w[0] === 'klw') return { klw: w.slice(1) };
  if (w[0] === 'node' && w[1]?.endsWith('infra/bin/klw.mjs')) return { klw: w.slice(2) };
  if (w[0] === 'npx') {
    const at = w.indexOf('klw');
    return at > 0 ? { klw: w.slice(at + 1) } : undefined;
  }
  if (w[0] === 'npm' && (w[1] === 'start' || w[1] === 'test'))
    return { npmScript: w[1], args: afterSeparator(w.slice(2)) };
  if (w[0] === 'npm' && w[1] === 'run' && w[2]) return { npmScript: w[2], args: afterSeparator(w.slice(3)) };
  return undefined;
}

/**
 * The option names among klw arguments as a user writes them in a synopsis: `--port`,
 * `[--port 3443]`, `--node=24`, `-o table|json|yaml`, `--as-group G…]`; values and `--` left out.
 */
export function optionNames(args: string[]): string[] {
  return args
    .map((a) => a.replace(/^\[+/, '').replace(/[\]…]+$/, ''))
    .filter((a) => /^--?[A-Za-z]/.test(a))
    .map((a) => a.split('=')[0]!);
}

/** A command's help: its subcommands and its options (long and short names), from `--help` text. */
export interface Help {
  commands: Set<string>;
  options: Set<string>;
}

/** Reads commander's `--help` output: the names under `Commands:` and the options under `Options:`. */
export function parseHelp(text: string): Help {
  const help: Help = { commands: new Set(), options: new Set() };
  let section = '';
  for (const line of text.split('\n')) {
    const title = /^(\w[\w ]*):\s*$/.exec(line);
    if (title) section = title[1]!;
    // Entries are indented by two spaces; their wrapped descriptions by more.
    const entry = /^ {2}(\S.*)$/.exec(line)?.[1];
    if (!entry) continue;
    if (section === 'Commands') help.commands.add(entry.split(/\s/)[0]!.replace(/\|.*$/, ''));
    if (section === 'Options' || section === 'Global Options')
      for (const m of entry.split(/\s{2,}/)[0]!.matchAll(/(?:^|,\s*)(--?[\w-]+)/g)) help.options.add(m[1]!);
  }
  return help;
}
