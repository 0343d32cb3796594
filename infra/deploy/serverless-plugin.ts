// The Serverless Framework plugin (`plugins: [kube-lambda-webhooks/serverless]`): the functions
// in functions/ are deployed from their registrations, so serverless.yml lists none of them.
import {
  DEFAULT_METRICS_NAMESPACE,
  METRICS_NAMESPACE_ENV,
  type EventSource,
  type Registration,
} from '../../lib/internal.ts';
import { ANY_DEPLOYMENT, buildAll, type Deployment } from '../build.ts';
import { loadFunctions, type FunctionEntry } from '../functions.ts';
import { checkRuntime, DEFAULT_MEMORY_MB, DEFAULT_RUNTIME } from '../runtimes.ts';
import { clusterPathSecretParameterName, pathSecretParameterName, usesPathSecret } from '../secrets/index.ts';
import { CLUSTER_PLACEHOLDER, FLEET_ENV, FLEET_PATH_SECRET_SSM_ENV } from '../../lib/handler/fleet.ts';
import { fleetEnvValue, loadFleet, type Fleet } from '../fleet/file.ts';
import { selectDeployed } from '../policies/deploy.ts';
import { type DeployedFunction, addFloodSafetyAndAlarms } from './alarms.ts';
import { alarmedClusters } from '../fleet/alarms.ts';
import { DEFAULT_RESERVED_CONCURRENCY, pluginParams, type PluginParams } from './params.ts';
import type { CfnTemplate } from './alarms.ts';
import { routePath } from './routes.ts';

export { PLUGIN_NAME, routePath } from './routes.ts';

export { DEFAULT_RESERVED_CONCURRENCY, pluginParams, type PluginParams } from './params.ts';

/** Where a deployment goes. */
export interface Stage {
  service: string;
  stage: string;
}

/**
 * A function as serverless.yml defines it: the keys the plugin writes or reads; any other key is
 * kept as written.
 */
export interface ServerlessFunction {
  handler?: string;
  package?: { artifact?: string };
  architecture?: string;
  timeout?: number;
  memorySize?: number;
  environment?: Record<string, unknown>;
  events?: unknown[];
  reservedConcurrency?: number;
  provisionedConcurrency?: number;
  url?: unknown;
  [key: string]: unknown;
}

/** The definition the plugin generates for a registration. */
export interface GeneratedFunction extends ServerlessFunction {
  handler: string;
  package: { artifact: string };
  architecture: string;
  timeout: number;
  memorySize: number;
  environment: Record<string, string>;
  events: Array<{ httpApi: { method: string; path: string } }>;
}

/**
 * The Serverless Framework definition of one function from its registration: the zip `klw
 * build` makes, `lambda.architecture` (default arm64), the webhook's timeout, memory and environment, the SSM parameter
 * names of its secrets (never their values), reserved and provisioned concurrency, and a
 * `POST` route on the HTTP API.
 */
export function functionDefinition(
  registration: Registration,
  target: Stage,
  params: PluginParams,
  fleet?: Fleet,
): GeneratedFunction {
  const provisioned = params.provisionedConcurrency ?? registration.lambda.provisionedConcurrency ?? 0;
  const environment: Record<string, string> = { ...(registration.lambda.environment ?? {}) };
  if (usesPathSecret(registration) && fleet) {
    // A fleet function accepts each cluster's own secret and names the caller by it.
    environment[FLEET_ENV] = fleetEnvValue(fleet, registration.name);
    const template = clusterPathSecretParameterName(target.service, target.stage, CLUSTER_PLACEHOLDER);
    environment[FLEET_PATH_SECRET_SSM_ENV] = template;
  } else if (usesPathSecret(registration)) {
    environment.KLW_PATH_SECRET_SSM = pathSecretParameterName(target.service, target.stage);
  }
  if (params.bearerTokenParameter && registration.type !== 'conversion')
    environment.KLW_BEARER_TOKEN_SSM = params.bearerTokenParameter;
  const fn: GeneratedFunction = {
    handler: 'index.handler',
    package: { artifact: `dist/functions/${registration.name}.zip` },
    architecture: registration.lambda.architecture ?? 'arm64',
    timeout: registration.timeoutSeconds,
    memorySize: registration.lambda.memorySize ?? DEFAULT_MEMORY_MB,
    environment,
    events: [{ httpApi: { method: 'POST', path: routePath(registration) } }],
  };
  if (params.reservedConcurrency !== 'off')
    fn.reservedConcurrency = params.reservedConcurrency ?? Math.max(DEFAULT_RESERVED_CONCURRENCY, provisioned);
  if (provisioned > 0) fn.provisionedConcurrency = provisioned;
  if (params.functionUrls) fn.url = true;
  return fn;
}

/** The event source of each serverless.yml event kind that can call a webhook. */
const EVENT_SOURCES: Readonly<Record<string, EventSource>> = { httpApi: 'http', http: 'rest', alb: 'alb' };

/**
 * What fronts a function as serverless.yml deploys it, for its bundle (infra/build.ts): the sources
 * of its events (`httpApi`, `http`, `alb`, and `url`) and whether KLW_FLEET reaches it. A function
 * with no event, or with one of another kind, keeps every source.
 */
export function deploymentOf(definition: ServerlessFunction, providerEnvironment?: unknown): Deployment {
  const sources = new Set<EventSource>();
  let other = false;
  for (const event of definition.events ?? []) {
    const kind = event && typeof event === 'object' ? Object.keys(event)[0] : undefined;
    const source = kind !== undefined && Object.hasOwn(EVENT_SOURCES, kind) ? EVENT_SOURCES[kind] : undefined;
    if (source) sources.add(source);
    else other = true;
  }
  if (definition.url) sources.add('url');
  const fleet =
    Object.hasOwn(definition.environment ?? {}, FLEET_ENV) ||
    Object.hasOwn(Object(providerEnvironment ?? {}), FLEET_ENV);
  return { sources: other || !sources.size ? ANY_DEPLOYMENT.sources : [...sources], fleet };
}

/**
 * The functions of serverless.yml after the plugin: every registration's generated
 * definition, with what serverless.yml itself says of a function winning key by key
 * (its `environment` merged over the generated one); functions serverless.yml adds that
 * are not in functions/ are kept as they are.
 */
export function mergeFunctions(
  registrations: Registration[],
  manual: Record<string, unknown> | undefined,
  target: Stage,
  params: PluginParams,
  providerEnvironment?: unknown,
  fleet?: Fleet,
): Record<string, unknown> {
  const out: Record<string, unknown> = { ...(manual ?? {}) };
  for (const reg of registrations) {
    const generated = functionDefinition(reg, target, params, fleet);
    // What serverless.yml says of the function, as written.
    const own = (manual?.[reg.name] ?? {}) as ServerlessFunction;
    const environment: Record<string, unknown> = { ...generated.environment, ...(own.environment ?? {}) };
    const given =
      environment.NODE_OPTIONS !== undefined
        ? environment.NODE_OPTIONS
        : (providerEnvironment as { NODE_OPTIONS?: unknown } | null | undefined)?.NODE_OPTIONS;
    const nodeOptions = withSourceMaps(given);
    if (nodeOptions !== undefined) environment.NODE_OPTIONS = nodeOptions;
    out[reg.name] = { ...generated, ...own, environment };
  }
  return out;
}

/** Node's flag for stack traces through the source map the zip ships (file:line of the sources). */
export const SOURCE_MAPS_FLAG = '--enable-source-maps';

/**
 * NODE_OPTIONS for a function: the given options with SOURCE_MAPS_FLAG added, so errors in the
 * logs point at the sources; undefined (left alone) for a value that is not a string, such as a
 * CloudFormation reference.
 */
export function withSourceMaps(options: unknown): string | undefined {
  if (options === undefined || options === null || options === '') return SOURCE_MAPS_FLAG;
  if (typeof options !== 'string') return undefined;
  return options.split(/\s+/).includes(SOURCE_MAPS_FLAG) ? options : `${options} ${SOURCE_MAPS_FLAG}`;
}

/** An IAM policy statement. */
export interface IamStatement {
  Effect: 'Allow';
  Action: string;
  Resource: Array<{ 'Fn::Sub': string }>;
}

/**
 * The IAM statement letting the functions read their secrets' SSM parameters (and nothing else):
 * with a fleet, each cluster's parameter by name instead of the service's.
 */
export function secretsStatement(
  registrations: Registration[],
  target: Stage,
  params: PluginParams,
  fleet?: Fleet,
): IamStatement | undefined {
  const names: string[] = [];
  if (registrations.some(usesPathSecret)) {
    const cluster = (name: string) => clusterPathSecretParameterName(target.service, target.stage, name);
    if (fleet) names.push(...fleet.clusters.map((c) => cluster(c.name)));
    else names.push(pathSecretParameterName(target.service, target.stage));
  }
  if (params.bearerTokenParameter) names.push(params.bearerTokenParameter);
  if (!names.length) return undefined;
  return {
    Effect: 'Allow',
    Action: 'ssm:GetParameter',
    Resource: names.map((name) => ({
      'Fn::Sub': `arn:\${AWS::Partition}:ssm:\${AWS::Region}:\${AWS::AccountId}:parameter/${name.replace(/^\//, '')}`,
    })),
  };
}

/** The parts of the Serverless Framework's plugin API the plugin uses. */
interface Serverless {
  serviceDir: string;
  configurationInput: ServerlessConfiguration;
  service: {
    service: string;
    functions: Record<string, unknown>;
    provider: { runtime?: unknown; environment?: Record<string, unknown>; compiledCloudFormationTemplate: CfnTemplate };
  };
  getProvider(name: 'aws'): {
    getStage(): string;
    naming: { getLambdaLogicalId(name: string): string; getNormalizedFunctionName(name: string): string };
  };
  classes: { Error: new (message: string) => Error };
}

/** serverless.yml as written, where the plugin reads and adds. */
interface ServerlessConfiguration {
  provider?: { runtime?: unknown; environment?: unknown; iam?: { role?: unknown } };
  functions?: Record<string, unknown>;
  [key: string]: unknown;
}

interface Log {
  warning?(message: string): void;
  notice?(message: string): void;
  info?(message: string): void;
}

/**
 * The plugin. On start it reads the registrations in functions/ and adds their functions and
 * the IAM statement for their secrets; before packaging it builds the zips; before the
 * template is written it adds throttling and alarms.
 */
export default class KubeLambdaWebhooksPlugin {
  readonly hooks: Record<string, () => Promise<void>>;
  private entries: FunctionEntry[] = [];
  private params: PluginParams | undefined;
  /** The fleet clusters with alarms of their own. */
  private alarmedClusters: string[] = [];

  constructor(
    private readonly serverless: Serverless,
    private readonly options: { param?: unknown } = {},
    private readonly utils: { log?: Log } = {},
  ) {
    this.hooks = {
      'before:package:createDeploymentArtifacts': () => this.build(),
      'before:deploy:function:packageFunction': () => this.build(),
      'before:package:finalize': async () => this.finalize(),
    };
  }

  private fail(message: string): Error {
    return new this.serverless.classes.Error(`kube-lambda-webhooks: ${message}`);
  }

  private target(): Stage {
    return { service: String(this.serverless.service.service), stage: this.serverless.getProvider('aws').getStage() };
  }

  /** Called by the Serverless Framework once every plugin is loaded, before the configuration is validated. */
  async asyncInit(): Promise<void> {
    const input = this.serverless.configurationInput;
    const target = this.target();
    let fleet: Fleet | undefined;
    try {
      this.params = pluginParams(input, target.stage, this.options.param);
      const loaded = await loadFunctions(this.serverless.serviceDir);
      fleet = loadFleet(
        this.serverless.serviceDir,
        loaded.map((e) => e.registration),
      );
      // A policy's function only where some cluster serves it from Lambda.
      const selection = selectDeployed(this.serverless.serviceDir, loaded, fleet);
      for (const line of selection.lines) this.utils.log?.notice?.(`kube-lambda-webhooks: ${line}`);
      this.entries = selection.deployed;
      this.alarmedClusters = alarmedClusters(fleet, this.params.clusterAlarms, this.entries.length);
    } catch (err) {
      throw this.fail((err as Error).message);
    }
    const registrations = this.entries.map((e) => e.registration);
    input.provider ??= {};
    input.provider.runtime ??= DEFAULT_RUNTIME;
    // A runtime AWS deprecated or blocks is said here too, for deploys that do not go through klw.
    for (const finding of checkRuntime(input.provider.runtime, 'provider.runtime'))
      this.utils.log?.warning?.(`kube-lambda-webhooks: ${finding.message}`);
    const manual = input.functions ?? undefined;
    input.functions = mergeFunctions(registrations, manual, target, this.params, input.provider.environment, fleet);
    this.serverless.service.functions = input.functions;
    const statement = secretsStatement(registrations, target, this.params, fleet);
    if (statement) {
      const role = ((input.provider.iam ??= {}).role ??= {}) as { statements?: unknown[] };
      if (typeof role === 'object') role.statements = [...(role.statements ?? []), statement];
    }
  }

  private async build(): Promise<void> {
    const runtime = String(this.serverless.service.provider.runtime ?? DEFAULT_RUNTIME);
    const functions: Record<string, unknown> = this.serverless.service.functions ?? {};
    const environment = this.serverless.service.provider.environment;
    // Each bundle leaves out the event sources and fleet code its deployment does not use.
    await buildAll(this.serverless.serviceDir, this.entries, undefined, runtime, (name) =>
      deploymentOf((functions[name] ?? {}) as ServerlessFunction, environment),
    );
    this.utils.log?.info?.(`kube-lambda-webhooks: built ${this.entries.length} functions for ${runtime}`);
  }

  private finalize(): void {
    const naming = this.serverless.getProvider('aws').naming;
    const functions = this.serverless.service.functions;
    const deployed: DeployedFunction[] = this.entries.map(({ registration }) => {
      const fn = (functions[registration.name] ?? {}) as ServerlessFunction;
      const routeKeys = (fn.events ?? [])
        .map((e) => (e as { httpApi?: unknown }).httpApi)
        .filter((h): h is { method?: unknown; path?: unknown } => !!h && typeof h === 'object')
        .map((h) => `${String(h.method ?? 'ANY').toUpperCase()} ${h.path}`);
      return {
        registration,
        lambdaLogicalId: naming.getLambdaLogicalId(registration.name),
        logicalIdPrefix: naming.getNormalizedFunctionName(registration.name),
        reservedConcurrency: Number(fn.reservedConcurrency ?? DEFAULT_RESERVED_CONCURRENCY),
        routeKeys,
      };
    });
    const namespace =
      String(this.serverless.service.provider.environment?.[METRICS_NAMESPACE_ENV] ?? '').trim() ||
      DEFAULT_METRICS_NAMESPACE;
    addFloodSafetyAndAlarms(
      this.serverless.service.provider.compiledCloudFormationTemplate,
      deployed,
      this.params!,
      namespace,
      this.alarmedClusters,
    );
  }
}
