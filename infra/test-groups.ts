// `klw test --group` runs built test files several to a process: each process costs a start and
// a load (and compile) of the modules its files import, often more CPU than the file's tests. A
// group is a module written for the run (groupEntry) that runs its files one after another
// through infra/test-group.mjs: each file as a suite named after it, its tests and hooks inside,
// and what it left changed in the process (directory, environment, process listeners) failing it.
// A file that says it needs a process of its own keeps one; one that ends the process when
// grouped fails the run.

import { markerLine } from './test-build.ts';

/** The line a test file carries to keep a process of its own under `klw test --group`. */
export const OWN_PROCESS_MARKER = '// klw-test: own-process';

/**
 * What keeps a test file out of the groups: OWN_PROCESS_MARKER on a line of its own. A file that
 * ends the process when grouped fails the run, naming it (infra/test-group.mjs).
 */
export const NEEDS_OWN_PROCESS = markerLine('own-process');

/**
 * What a test file carries when its tests replace a built-in of every array (such as
 * `Array.prototype[Symbol.iterator]`, to count the steps of a parse): V8 then turns off its fast
 * paths for array iteration in the whole process for good, even once the built-in is put back, so
 * every file run after it in a group runs slower. Such a file runs last in its group (groupOrder).
 */
export const PATCHES_BUILTINS = markerLine('patches-builtins');

/** `files` in the order a group runs them: as given, those whose text carries PATCHES_BUILTINS last. */
export function groupOrder(files: string[], textOf: (file: string) => string): string[] {
  const last = new Set(files.filter((f) => PATCHES_BUILTINS.test(textOf(f))));
  return [...files.filter((f) => !last.has(f)), ...files.filter((f) => last.has(f))];
}

/** The runtime of a group (infra/test-group.mjs), plain JavaScript as the built files are. */
const GROUP_RUNTIME = new URL('./test-group.mjs', import.meta.url).href;

/** The time assumed for a file never timed: the middle of the known ones, or a second. */
export function typicalTime(times: number[]): number {
  if (!times.length) return 1000;
  const sorted = [...times].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)]!;
}

/** What planGroups needs to know about the run. */
export interface GroupPlanInput {
  /** The files that may share a process (relative to root), in the order given. */
  shareable: string[];
  /** Every file of the run, shareable or not: the longest sets how long a group may take. */
  all: string[];
  /** Kept times (ms) by file relative to root; a file missing is assumed typical. */
  times: Record<string, number>;
  /** Processes run at once. */
  concurrency: number;
}

/**
 * The shareable files in groups of about equal time (longest first into the least loaded group),
 * as few as keep the run's tail short: a group takes no longer than the run's longest file, nor
 * than a third of each worker's share of the run, whichever is longer. Every shareable file is in
 * exactly one group; a group of one file is left to run as a file.
 */
export function planGroups({ shareable, all, times, concurrency }: GroupPlanInput): string[][] {
  if (shareable.length < 2) return shareable.map((f) => [f]);
  const typical = typicalTime(Object.values(times));
  const time = (f: string) => (Object.hasOwn(times, f) ? times[f]! : typical);
  const total = all.reduce((sum, f) => sum + time(f), 0);
  const longest = Math.max(...all.map(time));
  const budget = Math.max(longest, total / (3 * Math.max(1, concurrency)), 1);
  const sum = shareable.reduce((s, f) => s + time(f), 0);
  const count = Math.min(shareable.length, Math.max(1, Math.ceil(sum / budget)));
  const groups = Array.from({ length: count }, () => ({ files: [] as string[], time: 0 }));
  const longestFirst = shareable
    .map((file, index) => ({ file, index }))
    .sort((a, b) => time(b.file) - time(a.file) || a.index - b.index);
  for (const { file } of longestFirst) {
    const lightest = groups.reduce((min, g) => (g.time < min.time ? g : min));
    lightest.files.push(file);
    lightest.time += time(file);
  }
  return groups.filter((g) => g.files.length).map((g) => g.files);
}

/** A file of a group: the source a user knows and the built module run. */
export interface GroupedFile {
  /** The source file, absolute: named in messages. */
  source: string;
  /** The built module, absolute: the suite's name, which the reporter shows as the source's. */
  run: string;
}

/** The module of a group: it runs each file in turn, as a suite of its own (infra/test-group.mjs). */
export function groupEntry(files: GroupedFile[]): string {
  const lines = [`import { runFile } from ${JSON.stringify(GROUP_RUNTIME)};`];
  for (const f of files) lines.push(`await runFile(${JSON.stringify(f.source)}, ${JSON.stringify(f.run)});`);
  return `${lines.join('\n')}\n`;
}
