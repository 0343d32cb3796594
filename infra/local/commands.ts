import { resolve } from 'node:path';
import { type Command, Option } from 'commander';
import type { EventSource } from '../../lib/gateway/sources.ts';
import type { Operation } from '../../lib/review/schemas.ts';
import { KlwError, loadFunctions } from '../functions.ts';
import { ensureLocalPathSecret, usesPathSecret } from '../secrets.ts';
import { startApi, type RunningApi } from './api.ts';
import {
  alive,
  appliedNote,
  applyRecorded,
  kubectlRunner,
  leftoverNotice,
  manualRemoval,
  readRecord,
  recordPath,
  unregister,
} from './apply.ts';
import { localInvoke, readInput } from './invoke.ts';
import { startLambda } from './lambda-api.ts';
import { defaultLogFormat, logSink, type LogFormat } from './output.ts';
import { readEnvVars } from './project.ts';
import { sampleReview } from './sample.ts';
import { NODE_OPTION_HELP } from '../node-binary.ts';
import { kubeVersionText } from '../kube-versions.ts';

/** Default debugger port of `--inspect` (Node's own). */
export const DEFAULT_INSPECT_PORT = 9229;

/** Options shared by start-api and start. */
interface ApiCommandOptions {
  host: string;
  port: number;
  eventFormat: EventSource;
  stateDir: string;
  concurrency?: number;
  watch?: boolean;
  publicUrl?: string;
  san: string[];
  envVars?: string;
  inspect?: boolean | string;
  logFormat?: LogFormat;
  logFile?: string;
  maxBufferedMb?: number;
  kubeVersion?: string;
}

/** Options of start-lambda. */
interface LambdaCommandOptions {
  host: string;
  port: number;
  concurrency?: number;
  stateDir: string;
  watch?: boolean;
  envVars?: string;
  logFormat?: LogFormat;
  logFile?: string;
  maxBufferedMb?: number;
}

const number = (value: string) => {
  const n = Number(value);
  if (!Number.isInteger(n) || n < 0) throw new KlwError(`${value} is not a whole number`);
  return n;
};
const collect = (value: string, previous: string[]) => [...previous, value];
const bufferedOption = () =>
  new Option(
    '--max-buffered-mb <mb>',
    'most MiB of request bodies held at once, across all connections (default 64)',
  ).argParser(number);
/** `--max-buffered-mb` as the servers' option, in bytes. */
const bufferedBytes = (mb: number | undefined) => (mb ? { maxBufferedBytes: mb * 1024 * 1024 } : {});
const formatOption = () =>
  new Option('--event-format <format>', 'event source to emulate').choices(['http', 'rest', 'url']).default('http');
const logOptions = (command: Command) =>
  command
    .addOption(
      new Option(
        '--log-format <format>',
        'text: one line per review (default on a terminal); json: JSON lines (default otherwise)',
      ).choices(['text', 'json']),
    )
    .option('--log-file <file>', 'also append every log line, as JSON, to this file');

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

function inspectPort(value: boolean | string | undefined): number | undefined {
  if (value === undefined || value === false) return undefined;
  if (value === true) return DEFAULT_INSPECT_PORT;
  return number(value);
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

/** Adds `klw local …` (invoke, start-api, start-lambda, unregister, generate-review) and `klw start` to the program. */
export function addLocalCommands(cli: Command, root: () => string, say: (line: string) => void): void {
  // klw's own --version only before a command, so generate-review's --version reaches it.
  cli.enablePositionalOptions();
  const local = cli.command('local').description('run functions locally, as sam local does');

  local
    .command('invoke')
    .description(
      "run a function's bundle once, as Lambda would (rebuilt when its sources are newer), and print only the result on stdout",
    )
    .argument('<function>', 'function name')
    .option('--event <file>', 'a Lambda event to send as it is (JSON file, - for stdin)')
    .option('--review <file>', 'a bare AdmissionReview or ConversionReview to wrap in an event (- for stdin)')
    .addOption(formatOption())
    .option('--build', 'build first even when the bundle is up to date')
    .option('--env-vars <file>', 'environment variables, SAM format: {"Parameters": {...}, "<function>": {...}}')
    .option('--state-dir <dir>', 'where the local path secret is kept', '.klw/local')
    .option('--node <major>', NODE_OPTION_HELP)
    .action(
      async (
        name: string,
        options: {
          event?: string;
          review?: string;
          eventFormat: EventSource;
          build?: boolean;
          envVars?: string;
          stateDir: string;
        },
      ) => {
        if (options.event && options.review) throw new KlwError('give --event or --review, not both');
        const outcome = await localInvoke({
          root: root(),
          name,
          format: options.eventFormat,
          stateDir: resolve(root(), options.stateDir),
          ...(options.event ? { event: readInput(options.event) } : {}),
          ...(options.review ? { review: readInput(options.review) } : {}),
          ...(options.build ? { build: true } : {}),
          ...(options.envVars ? { envVars: readEnvVars(options.envVars, (m) => say(`klw: warning: ${m}`)) } : {}),
          say,
        });
        say(
          JSON.stringify({
            msg: 'invoked',
            function: name,
            outcome: outcome.kind,
            cold: 'cold' in outcome ? outcome.cold : false,
            durationMs: 'durationMs' in outcome ? Math.round(outcome.durationMs) : 0,
          }),
        );
        if (outcome.kind === 'result') process.stdout.write(`${JSON.stringify(outcome.result, null, 2)}\n`);
        else if (outcome.kind === 'error') {
          process.stdout.write(`${JSON.stringify(outcome.error, null, 2)}\n`);
          for (const frame of outcome.error.stackTrace) say(`    ${frame}`);
          throw new KlwError(`function failed: ${outcome.error.errorType}: ${outcome.error.errorMessage}`);
        } else
          throw new KlwError(
            `function ${outcome.kind === 'timeout' ? 'timed out' : outcome.kind === 'crash' ? `crashed (${outcome.errorType ?? 'Runtime.ExitError'}: ${outcome.message})` : outcome.kind}`,
          );
      },
    );

  local
    .command('generate-review')
    .description(
      'print a sample review (or event) for a function, built from its rules, as sam local generate-event does',
    )
    .argument('<function>', 'function name')
    .addOption(
      new Option('--operation <operation>', 'admission operation').choices(['CREATE', 'UPDATE', 'DELETE', 'CONNECT']),
    )
    .addOption(new Option('--version <version>', 'review API version').choices(['v1', 'v1beta1']).default('v1'))
    .addOption(
      new Option('--event-format <format>', 'print the review wrapped in a Lambda event of this source').choices([
        'http',
        'rest',
        'url',
      ]),
    )
    // --event names a Lambda event file everywhere (klw local invoke); here it only says what to use.
    .addOption(new Option('--event <value>').hideHelp())
    .option('--state-dir <dir>', 'where the local path secret is kept (for the event path)', '.klw/local')
    .action(
      async (
        name: string,
        options: {
          operation?: Operation;
          version: 'v1' | 'v1beta1';
          eventFormat?: EventSource;
          event?: string;
          stateDir: string;
        },
      ) => {
        if (options.event !== undefined) {
          const format = ['http', 'rest', 'url'].includes(options.event) ? options.event : 'http|rest|url';
          throw new KlwError(
            `generate-review writes events, it reads none: --event-format ${format} prints the review wrapped in ` +
              'an event (--event names an event file, in klw local invoke)',
          );
        }
        const [fn] = await loadFunctions(root(), [name]);
        const reg = fn!.registration;
        const format = options.eventFormat;
        const path =
          format && usesPathSecret(reg)
            ? `${reg.path}/${ensureLocalPathSecret(resolve(root(), options.stateDir)).current}`
            : reg.path;
        const sample = sampleReview(reg, {
          root: root(),
          version: options.version,
          path,
          ...(options.operation ? { operation: options.operation } : {}),
          ...(format ? { event: format } : {}),
        });
        process.stdout.write(`${JSON.stringify(sample, null, 2)}\n`);
      },
    );

  const serveApi = async (
    options: ApiCommandOptions,
    onManifests?: (path: string) => Promise<void>,
  ): Promise<RunningApi> => {
    const log = logSink(options.logFormat ?? defaultLogFormat(), options.logFile && resolve(options.logFile));
    say('building and starting the local HTTPS API');
    const unreachable = unreachableWarning(options.host, options.publicUrl);
    if (unreachable) say(`klw: warning: ${unreachable}`);
    const port = inspectPort(options.inspect);
    const api = await startApi({
      root: root(),
      host: options.host,
      port: options.port,
      format: options.eventFormat,
      stateDir: options.stateDir,
      log,
      functionLog: log,
      ...(options.watch ? { watch: true } : {}),
      ...(options.concurrency ? { concurrency: options.concurrency } : {}),
      ...(options.publicUrl ? { publicUrl: options.publicUrl } : {}),
      ...(options.san.length ? { san: options.san } : {}),
      ...(options.envVars ? { envVars: readEnvVars(options.envVars, (m) => say(`klw: warning: ${m}`)) } : {}),
      ...(port !== undefined ? { inspectPort: port } : {}),
      ...(onManifests ? { onManifests } : {}),
      ...bufferedBytes(options.maxBufferedMb),
      ...(options.kubeVersion ? { kubeVersion: kubeVersionText(options.kubeVersion) } : {}),
    });
    say(
      `serving ${api.functions.length} functions at ${api.url} (${options.eventFormat} events; listening on ${options.host}:${api.port})`,
    );
    for (const name of api.functions)
      say(`  POST ${api.url}/${name}${api.functionUrl(name) !== `${api.url}/${name}` ? '/<path secret>' : ''}`);
    if (api.pathSecret)
      say(`path secret:    ${resolve(root(), options.stateDir, 'path-secret')} (in the manifests' URLs)`);
    say(`CA certificate: ${api.caPath}`);
    say(`manifests:      ${api.manifestsPath}`);
    for (const name of api.functions) {
      const debuggerPort = api.project.inspectPort(name);
      if (debuggerPort !== undefined)
        say(
          `debugger:       ${name} listening on 127.0.0.1:${debuggerPort} (chrome://inspect, or VS Code "Attach" to that port)`,
        );
    }
    return api;
  };

  const apiOptions = (command: Command) =>
    logOptions(
      command
        .option('--host <host>', 'address to listen on (0.0.0.0 for every interface)', '127.0.0.1')
        .option('--port <port>', 'port to listen on', number, 3443)
        .option(
          '--public-url <url>',
          'the URL the API server calls (https://HOST:PORT[/prefix]): written into the manifests and the certificate',
        )
        .option('--san <name>', 'another DNS name or IP address for the server certificate (repeatable)', collect, [])
        .addOption(formatOption())
        .option('--state-dir <dir>', 'where the CA, certificate, path secret and manifests are kept', '.klw/local')
        .option('--concurrency <n>', 'workers per function', number)
        .option('--watch', 'rebuild on change; pick up new, removed and re-registered functions')
        .option('--env-vars <file>', 'environment variables, SAM format: {"Parameters": {...}, "<function>": {...}}')
        .option(
          '--inspect [port]',
          `run one worker per function under the debugger, listening from the start (first port ${DEFAULT_INSPECT_PORT}, one per function)`,
        )
        .addOption(bufferedOption())
        .option('--node <major>', NODE_OPTION_HELP)
        .option(
          '--kube-version <X.Y>',
          'evaluate matchConditions as this Kubernetes version does (default: the newest)',
        ),
    );

  apiOptions(
    local
      .command('start-api')
      .description('serve every function over HTTPS with a local CA, as API Gateway or a function URL would'),
  ).action(async (options: ApiCommandOptions) => {
    await serveUntilStopped(
      () => serveApi(options),
      (api) => api.close(),
    );
  });

  logOptions(
    local
      .command('start-lambda')
      .description('serve the Lambda Invoke API, so the AWS SDK can invoke the functions locally')
      .option('--host <host>', 'address to listen on', '127.0.0.1')
      .option('--port <port>', 'port to listen on', number, 3001)
      .option('--concurrency <n>', 'workers per function', number)
      .option('--state-dir <dir>', 'where the local path secret is kept', '.klw/local')
      .option('--watch', 'rebuild on change; pick up new, removed and re-registered functions')
      .option('--env-vars <file>', 'environment variables, SAM format: {"Parameters": {...}, "<function>": {...}}')
      .addOption(bufferedOption())
      .option('--node <major>', NODE_OPTION_HELP),
  ).action(async (options: LambdaCommandOptions) => {
    const log = logSink(options.logFormat ?? defaultLogFormat(), options.logFile && resolve(options.logFile));
    await serveUntilStopped(
      async () => {
        const lambda = await startLambda({
          root: root(),
          host: options.host,
          port: options.port,
          stateDir: options.stateDir,
          log,
          functionLog: log,
          ...(options.concurrency ? { concurrency: options.concurrency } : {}),
          ...(options.watch ? { watch: true } : {}),
          ...(options.envVars ? { envVars: readEnvVars(options.envVars, (m) => say(`klw: warning: ${m}`)) } : {}),
          ...bufferedBytes(options.maxBufferedMb),
        });
        say(`Lambda Invoke API at ${lambda.endpoint} (new LambdaClient({ endpoint: '${lambda.endpoint}' }))`);
        return lambda;
      },
      (lambda) => lambda.close(),
    );
  });

  local
    .command('unregister')
    .description(
      'remove what klw start --apply registered (recorded in the state dir), restoring what was there before',
    )
    .option('--state-dir <dir>', 'the state dir klw start used', '.klw/local')
    .option('--kubeconfig <file>', 'kubeconfig (default: the one --apply used)')
    .action(async (options: { stateDir: string; kubeconfig?: string }) => {
      const stateDir = resolve(root(), options.stateDir);
      const record = readRecord(stateDir);
      if (!record) {
        say(`nothing to remove: ${recordPath(stateDir)} does not exist`);
        return;
      }
      if (record.pid !== process.pid && alive(record.pid))
        say(
          `note: the emulator that applied them (pid ${record.pid}) still runs; it will answer nothing once they are removed`,
        );
      await unregister(kubectlRunner(options.kubeconfig ?? record.kubeconfig), stateDir, say);
      say('removed');
    });

  apiOptions(cli.command('start').description('build, start the local HTTPS emulator and write manifests (npm start)'))
    .option('--apply', 'register the manifests with the cluster (removed again when stopped)')
    .option('--kubeconfig <file>', 'kubeconfig for --apply')
    .action(async (options: ApiCommandOptions & { apply?: boolean; kubeconfig?: string }) => {
      const stateDir = resolve(root(), options.stateDir);
      const kubeconfig = options.kubeconfig && resolve(options.kubeconfig);
      const kubectl = kubectlRunner(kubeconfig);
      if (options.apply) {
        const stale = readRecord(stateDir);
        if (stale && stale.pid !== process.pid && alive(stale.pid))
          throw new KlwError(
            `another emulator (pid ${stale.pid}) has its manifests applied from ${stateDir}; stop it first, or use another --state-dir`,
          );
        if (stale) {
          say(`a previous emulator (pid ${stale.pid}) stopped without removing what it registered; removing it now:`);
          await unregister(kubectlRunner(stale.kubeconfig ?? kubeconfig), stateDir, say);
        }
      } else for (const line of leftoverNotice(stateDir, options.stateDir)) say(line);
      let applied = false;
      const apply = async (manifests: string) => {
        try {
          const record = await applyRecorded(kubectl, manifests, stateDir, kubeconfig);
          if (!applied) {
            applied = true;
            say('');
            say(
              'REGISTERED with the cluster (the API server now sends reviews here; with failurePolicy Fail, requests fail while this emulator is unreachable):',
            );
            for (const o of record.objects) say(`  ${o.kind} ${o.name} (${appliedNote(o)})`);
            say(
              'This is undone when it stops (Ctrl+C). If it is killed, run: klw local unregister' +
                (options.stateDir !== '.klw/local' ? ` --state-dir ${options.stateDir}` : ''),
            );
            say('or by hand:');
            for (const line of manualRemoval(record)) say(`  ${line}`);
            say('');
          } else say(`re-applied ${manifests}`);
        } catch (err) {
          if (!applied) throw err;
          say(`klw: re-applying failed: ${(err as Error).message}`);
        }
      };
      await serveUntilStopped(
        async () => {
          const api = await serveApi(options, options.apply ? apply : undefined).catch(async (err: unknown) => {
            if (options.apply && readRecord(stateDir)) await unregister(kubectl, stateDir, say).catch(() => {});
            throw err;
          });
          if (!options.apply) {
            say(`register them with a cluster whose API server can reach ${api.url}:`);
            say(
              `  kubectl apply -f ${api.manifestsPath}${options.kubeconfig ? ` --kubeconfig ${options.kubeconfig}` : ''}`,
            );
            say('  (or klw start --apply: registered while it runs, undone when it stops)');
          }
          say('press Ctrl+C to stop');
          return api;
        },
        async (api) => {
          if (options.apply) {
            say('removing what --apply registered:');
            await unregister(kubectl, stateDir, say).catch((err: unknown) => say(`klw: ${(err as Error).message}`));
          }
          await api.close();
        },
      );
    });
}
