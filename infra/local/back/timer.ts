// The clock of an invocation's timeout, injectable so tests move it themselves.
import type { InvocationTimer } from '../invoker.ts';

export type { InvocationTimer } from '../invoker.ts';

/** The wall-clock timer the emulator uses. */
export const realTimer: InvocationTimer = (ms, onTimeout) => {
  const timer = setTimeout(onTimeout, ms);
  return () => clearTimeout(timer);
};
