// The one error type of klw's commands: its message is what the user reads, its exitCode what klw exits with.

/** Failure of a klw command, reported as one line without a stack; klw exits with its exitCode. */
export class KlwError extends Error {
  override name = 'KlwError';
  /** The exit code of klw for this failure: 1 unless the constructor's `exitCode` says otherwise. */
  readonly exitCode: number;

  /** `exitCode` (default 1) is what klw exits with; `cause` is the error behind this one. */
  constructor(message: string, options: { exitCode?: number; cause?: unknown } = {}) {
    super(message, 'cause' in options ? { cause: options.cause } : undefined);
    this.exitCode = options.exitCode ?? 1;
  }
}
