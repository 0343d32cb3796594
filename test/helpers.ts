import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { createLogger, type Logger } from '../lib/log.ts';
import type { RuleWithOperations } from '../lib/registration.ts';
import type { Pod } from './fixtures/project/functions/pod.ts';

/** A project of the toolkit's own tests: functions/ with fixture functions, never the examples. */
export const FIXTURE_PROJECT = fileURLToPath(new URL('./fixtures/project', import.meta.url));
/** The fixture project's functions/ folder. */
export const FIXTURE_FUNCTIONS = fileURLToPath(new URL('./fixtures/project/functions', import.meta.url));

/**
 * Rules matching every admission request, for webhooks whose tests are about what they answer:
 * the test kit refuses reviews the rules do not match, as the API server never sends those.
 */
export const EVERY_REQUEST: RuleWithOperations[] = [{ operations: ['*'], apiGroups: ['*'], apiVersions: ['*'], resources: ['*/*'], scope: '*' }];

const cache = new Map<string, string>();

/** A fresh copy of `test/events/<name>.json`, safe to change in one test. */
export function fixture<T = Record<string, any>>(name: string): T {
  let text = cache.get(name);
  if (text === undefined) {
    text = readFileSync(fileURLToPath(new URL(`./events/${name}.json`, import.meta.url)), 'utf8');
    cache.set(name, text);
  }
  return JSON.parse(text) as T;
}

/** An envelope fixture (`rest`, `http`, `url`) carrying `body`. */
export function eventWith(source: 'rest' | 'http' | 'url', body: unknown, changes: (event: Record<string, any>) => void = () => {}): Record<string, any> {
  const event = fixture(`${source}/post`);
  event.body = typeof body === 'string' ? body : JSON.stringify(body);
  changes(event);
  return event;
}

/** A logger that keeps its lines, parsed, for assertions. */
export function captureLogger(): { logger: Logger; lines: Array<Record<string, any>> } {
  const lines: Array<Record<string, any>> = [];
  return { logger: createLogger({ level: 'debug', sink: (line) => lines.push(JSON.parse(line)) }), lines };
}

/** Parses a Lambda HTTP result's JSON body. */
export function bodyOf(result: unknown): any {
  return JSON.parse((result as { body: string }).body);
}

/** A pod `web` in namespace `shop` with one tagged container, and `spec` merged over it. */
export function testPod(spec: Pod['spec'] = {}): Pod {
  return {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: { name: 'web', namespace: 'shop' },
    spec: { containers: [{ name: 'app', image: 'nginx:1.25' }], ...spec },
  };
}

/** Runs klw in-process with the given arguments; its exit code and what it wrote to stderr. */
export async function runKlw(...args: string[]): Promise<{ code: number; stderr: string }> {
  const { main } = await import('../infra/cli.ts');
  const writes: string[] = [];
  const original = process.stderr.write.bind(process.stderr);
  process.stderr.write = ((chunk: string) => (writes.push(String(chunk)), true)) as typeof process.stderr.write;
  try {
    return { code: await main(['node', 'klw', ...args]), stderr: writes.join('') };
  } finally {
    process.stderr.write = original;
  }
}

/** Thrown values that break `String(value)` or `error.message`, by what they are. */
export function hostileThrowables(): Array<[string, unknown]> {
  const messageThrows = new Error('hidden');
  Object.defineProperty(messageThrows, 'message', {
    get() {
      throw new Error('message getter');
    },
  });
  const { proxy, revoke } = Proxy.revocable({}, {});
  revoke();
  return [
    ['an object without a prototype', Object.create(null)],
    [
      'an object whose toString throws',
      {
        toString() {
          throw new Error('toString');
        },
      },
    ],
    ['an Error whose message getter throws', messageThrows],
    ['a revoked Proxy', proxy],
  ];
}
