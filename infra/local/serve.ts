// Running a server until Ctrl+C (klw start, local start-api and start-lambda), and checks of where it listens.

// Signals after the first that cleanup ignores: npm forwards the one its process group already got,
// so one Ctrl+C under `npm start` arrives twice; a second Ctrl+C (two more) forces the exit.
const IGNORED_REPEATS = 1;

/** Exit code of a stop forced by repeated signals (128 + SIGINT, as a shell reports it). */
export const FORCED_EXIT_CODE = 130;

/**
 * Waits for SIGINT or SIGTERM, then runs `stop`. A repeated signal during `stop` is ignored
 * (npm delivers each one twice), then a further one exits at once, cleanup or not.
 */
export function untilStopped(
  stop: () => Promise<void>,
  exit: (code: number) => void = (code) => process.exit(code),
): Promise<void> {
  return new Promise((resolvePromise, reject) => {
    let received = 0;
    const handler = () => {
      received++;
      if (received === 1) {
        stop()
          .finally(() => {
            process.off('SIGINT', handler);
            process.off('SIGTERM', handler);
          })
          .then(resolvePromise, reject);
      } else if (received > 1 + IGNORED_REPEATS) exit(FORCED_EXIT_CODE);
    };
    process.on('SIGINT', handler);
    process.on('SIGTERM', handler);
  });
}

/**
 * Starts a server and runs it until SIGINT or SIGTERM. The signal handlers are in place before
 * it starts, so a signal that comes as soon as it says it is ready (or while it is starting)
 * stops it cleanly instead of killing the process with the signal's default action.
 */
export async function serveUntilStopped<T>(start: () => Promise<T>, stop: (server: T) => Promise<void>): Promise<void> {
  let starting: Promise<T> | undefined;
  const stopped = untilStopped(async () => stop(await starting!));
  starting = start();
  try {
    await starting;
  } catch (err) {
    stopped.catch(() => {}); // a later signal finds nothing to stop
    throw err;
  }
  await stopped;
}

/** True for a loopback name or address: localhost, 127.0.0.0/8, ::1. */
function isLoopback(host: string): boolean {
  const bare = host.replace(/^\[(.*)\]$/, '$1').toLowerCase();
  return (
    bare === 'localhost' ||
    bare.endsWith('.localhost') ||
    bare === '::1' ||
    /^127\.\d+\.\d+\.\d+$/.test(bare) ||
    /^::ffff:127\./.test(bare)
  );
}

/** A warning when `--public-url` names a host other than this machine's loopback while `--host` listens on loopback only, else undefined. */
export function unreachableWarning(host: string, publicUrl: string | undefined): string | undefined {
  if (!publicUrl || !isLoopback(host)) return undefined;
  let target: string;
  try {
    target = new URL(publicUrl).hostname;
  } catch {
    return undefined; // startApi reports a bad --public-url
  }
  if (isLoopback(target)) return undefined;
  return `--public-url names ${target} but the emulator listens on ${host} (loopback) only: the API server cannot reach it there unless a tunnel forwards ${target} to ${host}; otherwise listen where it can reach (--host 0.0.0.0 or an address of this machine)`;
}
