// Types of test-group.mjs (plain JavaScript, so that it runs beside the built test files).

/** The state of the process a test file may change and must put back. */
export interface ProcessState {
  /** The working directory. */
  cwd: string;
  /** A copy of process.env. */
  env: Record<string, string | undefined>;
  /** How many listeners each process event has. */
  listeners: Record<string, number>;
}

/** The state of the process now. */
export declare function processState(): ProcessState;
/**
 * What differs between `before` and now, as sentences, the directory and environment put back;
 * a variable newly set counts only when `own(name)`.
 */
export declare function restoreProcess(before: ProcessState, own?: (name: string) => boolean): string[];
/**
 * Runs the built test file `run` (imported by `load`, by default from its path) as a suite of
 * this process named `run`; resolves once the suite has ended.
 */
export declare function runFile(source: string, run: string, load?: () => Promise<unknown>): Promise<void>;
