import { resolve } from 'node:path';
import { type Command, Option } from 'commander';
import type { EventSource, Operation } from '../../lib/internal.ts';
import { KlwError } from '../errors.ts';
import type { LogFormat, RunningApi } from '../local/index.ts';
import type { CommandContext } from './context.ts';
import {
  describeEventSources as describeSources,
  eventSourceNames as sourceNames,
  envVarsOption,
  kubeconfigOption,
  nodeOption,
  stateDirOption,
  type EnvVarsOptions,
  type KubeconfigOptions,
  type StateDirOptions,
} from './options.ts';

/** The emulator, imported when an action runs: the program lists the commands' options without it. */
const emulator = () => import('../local/index.ts');

/** Default debugger port of `--inspect` (Node's own). */
export const DEFAULT_INSPECT_PORT = 9229;

/** Options shared by start-api and start. */
export interface ApiCommandOptions extends StateDirOptions, EnvVarsOptions {
  host: string;
  port: number;
  eventFormat: EventSource;
  concurrency?: number;
  watch?: boolean;
  publicUrl?: string;
  san: string[];
  inspect?: boolean | string;
  logFormat?: LogFormat;
  logFile?: string;
  maxBufferedMb?: number;
  kubeVersion?: string;
}

/** Options of start-lambda. */
interface LambdaCommandOptions extends StateDirOptions, EnvVarsOptions {
  host: string;
  port: number;
  concurrency?: number;
  watch?: boolean;
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
  new Option('--event-format <format>', `event source to emulate: ${describeSources()}`)
    .choices(sourceNames())
    .default('http');
const logOptions = (command: Command) =>
  command
    .addOption(
      new Option(
        '--log-format <format>',
        'text: one line per review (default on a terminal); json: JSON lines (default otherwise)',
      ).choices(['text', 'json']),
    )
    .option('--log-file <file>', 'also append every log line, as JSON, to this file');

function inspectPort(value: boolean | string | undefined): number | undefined {
  if (value === undefined || value === false) return undefined;
  if (value === true) return DEFAULT_INSPECT_PORT;
  return number(value);
}

/** Adds `klw local …` (invoke, start-api, start-lambda, unregister, generate-review) to the program. */
export function register(cli: Command, context: CommandContext): void {
  // klw's own --version only before a command, so generate-review's --version reaches it.
  cli.enablePositionalOptions();
  const local = cli.command('local').description('run functions locally, as sam local does');
  registerInvoke(local, context);
  registerGenerateReview(local, context);
  registerStartApi(local, context);
  registerStartLambda(local, context);
  registerUnregister(local, context);
}

/** Adds `klw local invoke`. */
function registerInvoke(local: Command, { root, say }: CommandContext): void {
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
    .addOption(envVarsOption())
    .addOption(stateDirOption('where the local path secret is kept'))
    .addOption(nodeOption())
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
        const { localInvoke, readEnvVars, readInput } = await emulator();
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
}

/** Adds `klw local generate-review`. */
function registerGenerateReview(local: Command, { root }: CommandContext): void {
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
      new Option('--event-format <format>', 'print the review wrapped in a Lambda event of this source').choices(
        sourceNames(),
      ),
    )
    // --event names a Lambda event file everywhere (klw local invoke); here it only says what to use.
    .addOption(new Option('--event <value>').hideHelp())
    .addOption(stateDirOption('where the local path secret is kept (for the event path)'))
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
          const names: string[] = sourceNames();
          const format = names.includes(options.event) ? options.event : names.join('|');
          throw new KlwError(
            `generate-review writes events, it reads none: --event-format ${format} prints the review wrapped in ` +
              'an event (--event names an event file, in klw local invoke)',
          );
        }
        const { loadFunctions } = await import('../functions.ts');
        const { ensureLocalPathSecret, usesPathSecret } = await import('../secrets/index.ts');
        const { sampleReview } = await emulator();
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
}

/** Builds and starts the local HTTPS API (start-api, start) and says where it serves. */
export async function serveApi(
  { root, say }: CommandContext,
  options: ApiCommandOptions,
  onManifests?: (path: string) => Promise<void>,
): Promise<RunningApi> {
  const { defaultLogFormat, logSink, readEnvVars, startApi, unreachableWarning } = await emulator();
  const { kubeVersionText } = await import('../kube-versions.ts');
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
    `serving ${api.functions.length} function${api.functions.length === 1 ? '' : 's'} at ${api.url} (${options.eventFormat} events; listening on ${options.host}:${api.port})`,
  );
  for (const name of api.functions)
    say(`  POST ${api.url}/${name}${api.functionUrl(name) !== `${api.url}/${name}` ? '/<path secret>' : ''}`);
  if (api.pathSecret) {
    const { file, cluster } = api.pathSecretSource();
    say(`path secret:    ${file} (${cluster ? `cluster ${cluster}'s, ` : ''}in the manifests' URLs)`);
  }
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
}

/** Adds the options of start-api and start to `command`. */
export function apiOptions(command: Command): Command {
  return logOptions(
    command
      .option('--host <host>', 'address to listen on (0.0.0.0 for every interface)', '127.0.0.1')
      .option('--port <port>', 'port to listen on', number, 3443)
      .option(
        '--public-url <url>',
        'the URL the API server calls (https://HOST:PORT[/prefix]): written into the manifests and the certificate',
      )
      .option('--san <name>', 'another DNS name or IP address for the server certificate (repeatable)', collect, [])
      .addOption(formatOption())
      .addOption(stateDirOption('where the CA, certificate, path secret and manifests are kept'))
      .option('--concurrency <n>', 'workers per function', number)
      .option('--watch', 'rebuild on change; pick up new, removed and re-registered functions')
      .addOption(envVarsOption())
      .option(
        '--inspect [port]',
        `run one worker per function under the debugger, listening from the start (first port ${DEFAULT_INSPECT_PORT}, one per function)`,
      )
      .addOption(bufferedOption())
      .addOption(nodeOption())
      .option('--kube-version <X.Y>', 'evaluate matchConditions as this Kubernetes version does (default: the newest)'),
  );
}

/** Adds `klw local start-api`. */
function registerStartApi(local: Command, context: CommandContext): void {
  apiOptions(
    local
      .command('start-api')
      .description('serve every function over HTTPS with a local CA, as API Gateway or a function URL would'),
  ).action(async (options: ApiCommandOptions) => {
    const { serveUntilStopped } = await emulator();
    await serveUntilStopped(
      () => serveApi(context, options),
      (api) => api.close(),
    );
  });
}

/** Adds `klw local start-lambda`. */
function registerStartLambda(local: Command, { root, say }: CommandContext): void {
  logOptions(
    local
      .command('start-lambda')
      .description('serve the Lambda Invoke API, so the AWS SDK can invoke the functions locally')
      .option('--host <host>', 'address to listen on', '127.0.0.1')
      .option('--port <port>', 'port to listen on', number, 3001)
      .option('--concurrency <n>', 'workers per function', number)
      .addOption(stateDirOption('where the local path secret is kept'))
      .option('--watch', 'rebuild on change; pick up new, removed and re-registered functions')
      .addOption(envVarsOption())
      .addOption(bufferedOption())
      .addOption(nodeOption()),
  ).action(async (options: LambdaCommandOptions) => {
    const { defaultLogFormat, logSink, readEnvVars, serveUntilStopped, startLambda } = await emulator();
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
}

/** Adds `klw local unregister`. */
function registerUnregister(local: Command, { root, say }: CommandContext): void {
  local
    .command('unregister')
    .description(
      'remove what klw start --apply registered (recorded in the state dir), restoring what was there before',
    )
    .addOption(stateDirOption('the state dir klw start used'))
    .addOption(kubeconfigOption('kubeconfig (default: the one --apply used)'))
    .action(async (options: StateDirOptions & KubeconfigOptions) => {
      const { alive, kubectlRunner, readRecord, recordPath, unregister } = await emulator();
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
}
