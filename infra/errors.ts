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

/** The longest description of a thrown value klw prints: a module may throw a string of any size. */
const MAX_DESCRIPTION = 2000;

/** `read()`, or undefined when it throws (a Proxy's trap, a getter). */
function attempt<T>(read: () => T): T | undefined {
  try {
    return read();
  } catch {
    return undefined;
  }
}

/** `value instanceof type`, false where asking throws (a Proxy whose getPrototypeOf trap throws). */
export function isInstance(value: unknown, type: abstract new (...args: never[]) => unknown): boolean {
  try {
    return value instanceof type;
  } catch {
    return false;
  }
}

/** A thrown value's message for an error naming `file`: a KlwError's own (it names the file), else `file: what was thrown`. */
export function thrownIn(file: string, value: unknown): string {
  return isInstance(value, KlwError) ? (value as KlwError).message : `${file}: ${describeThrown(value)}`;
}

/**
 * What a thrown value says, whatever it is: an Error's message (its name when it has none), a string, a number, a Symbol, an object without a prototype, a Proxy whose every
 * read throws. Never throws itself; at most MAX_DESCRIPTION characters.
 */
export function describeThrown(value: unknown): string {
  const text = attempt(() => describeValue(value)) ?? 'a value that cannot be read';
  return text.length > MAX_DESCRIPTION ? `${text.slice(0, MAX_DESCRIPTION)}… (${text.length} characters)` : text;
}

function describeValue(value: unknown): string {
  if (value === null || value === undefined) return `${value} (thrown as it is, not an Error)`;
  switch (typeof value) {
    case 'string':
      return value;
    case 'symbol':
      return `${attempt(() => value.toString()) ?? 'a Symbol'} (thrown as it is, not an Error)`;
    case 'function':
      return `a function${attempt(() => (typeof value.name === 'string' && value.name ? ` ${value.name}` : '')) ?? ''} (thrown as it is, not an Error)`;
    case 'object':
      break;
    default:
      return `${String(value)} (thrown as it is, not an Error)`;
  }
  const message = attempt(() => (value as { message?: unknown }).message);
  const name = attempt(() => (value as { name?: unknown }).name);
  if (typeof message === 'string' && message) return message;
  if (typeof name === 'string' && name) return `${name} (without a message)`;
  const json = attempt(() => JSON.stringify(value));
  if (typeof json === 'string' && json !== '{}') return `${json} (thrown as it is, not an Error)`;
  const proto = attempt(() => Object.getPrototypeOf(value));
  if (proto === null) return 'an object without a prototype and without a message (thrown instead of an Error)';
  if (proto === undefined) return 'an object whose properties cannot be read (a Proxy that throws?), not an Error';
  return 'an object without a message (thrown instead of an Error)';
}
