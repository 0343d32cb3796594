/**
 * `string(…)` as cel-go converts: doubles formatted as Go's strconv 'g' (`string(1e6)` is `1e+06`),
 * bytes refused when they are not UTF-8, timestamps and durations as Go writes them. The screen points
 * every `string(…)` call at these overloads (check/screen.ts), so every environment has them; the
 * Kubernetes libraries add only those of their own types (`net.IP`, `net.CIDR`).
 */
import type { Environment } from '../engine.ts';
import { RENAMED } from '../check/messages.ts';
import { goFormatFloat } from './go.ts';
import { formatDuration, formatTimestamp, TIMESTAMP } from './time.ts';

/**
 * Decodes UTF-8, refusing invalid sequences, as cel-go's string(bytes) does; made on first use (a
 * decoder costs a cold start that converts no bytes).
 */
let utf8: InstanceType<typeof TextDecoder> | undefined;

/** string(bytes): the text, or cel-go's error for bytes that are not UTF-8. */
function bytesToString(v: Uint8Array): string {
  try {
    utf8 ??= new TextDecoder('utf-8', { fatal: true });
    return utf8.decode(v);
  } catch {
    throw new RangeError('invalid UTF-8 in bytes, cannot convert to string');
  }
}

/** Registers `string(…)` of the standard types, under the name the screen points calls at. */
export function registerStringConversions(env: Environment): void {
  const k = RENAMED;
  env
    .registerFunction(`string${k}(string): string`, (v: string) => v)
    .registerFunction(`string${k}(bool): string`, (v: boolean) => String(v))
    .registerFunction(`string${k}(int): string`, (v: bigint) => String(v))
    .registerFunction(`string${k}(uint): string`, (v: unknown) => String(v))
    .registerFunction(`string${k}(bytes): string`, bytesToString)
    .registerFunction(`string${k}(double): string`, goFormatFloat)
    .registerFunction(`string${k}(${TIMESTAMP}): string`, formatTimestamp)
    .registerFunction(`string${k}(google.protobuf.Duration): string`, formatDuration);
}
