// The clock of an invocation's timeout, injectable so tests move it themselves.
/**
 * Starts one invocation's timeout clock: calls `onTimeout` after `ms` unless the returned
 * function cancels it first. Tests pass one they move on themselves.
 */
export type InvocationTimer = (ms: number, onTimeout: () => void) => () => void;

/** The wall-clock timer the emulator uses. */
export const realTimer: InvocationTimer = (ms, onTimeout) => {
  const timer = setTimeout(onTimeout, ms);
  return () => clearTimeout(timer);
};
