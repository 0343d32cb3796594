// The serverless.yml stage parameters the plugin reads (`params:`, or `--param name=value`).
import { parseClusterAlarms, type ClusterAlarmsSetting } from '../fleet/alarms.ts';
import { valueAt } from '../json.ts';

/**
 * Reserved concurrency a function gets unless the registration's provisioned concurrency or
 * an override asks for more: enough for a busy cluster (a warm review takes milliseconds),
 * small enough that a flood cannot take the account's shared pool (1,000 by default) from
 * every other function.
 */
export const DEFAULT_RESERVED_CONCURRENCY = 20;
/** Stage parameters the plugin reads (`params:` in serverless.yml, or `--param name=value`). */
export interface PluginParams {
  /** Also give every function a Lambda function URL (auth NONE; the path secret or bearer token protects it). */
  functionUrls: boolean;
  /** Instances kept warm per function; overrides every registration's `lambda.provisionedConcurrency`. */
  provisionedConcurrency?: number;
  /**
   * Reserved concurrency per function; default: the larger of DEFAULT_RESERVED_CONCURRENCY and
   * the provisioned concurrency; `off`: none (accounts whose concurrency quota leaves no room to reserve).
   */
  reservedConcurrency?: number | 'off';
  /** HTTP API throttling per route: steady requests per second; default reserved concurrency × THROTTLE_RATE_PER_CONCURRENCY. */
  throttleRate?: number;
  /** HTTP API throttling per route: burst; default rate × THROTTLE_BURST_FACTOR. */
  throttleBurst?: number;
  /** SSM parameter with the bearer token the API server sends (self-managed clusters); empty: none. */
  bearerTokenParameter: string;
  /** Add the CloudWatch alarms (default true). */
  alarms: boolean;
  /** 4xx answers per minute on the HTTP API stage that fire its alarm; default DEFAULT_API_CLIENT_ERRORS_THRESHOLD. */
  apiClientErrorsThreshold?: number;
  /** SNS topic ARN the alarms notify; empty: alarms without actions. */
  alarmTopicArn: string;
  /** Fleet clusters that get their own alarms per function (`all` or names); none when unset. */
  clusterAlarms?: ClusterAlarmsSetting;
}

function asNumber(value: unknown, name: string): number | undefined {
  if (value === undefined || value === null || value === '') return undefined;
  const n = typeof value === 'number' ? value : Number(value);
  if (!Number.isInteger(n) || n < 0)
    throw new Error(`param ${name} must be a whole number of at least 0, got ${JSON.stringify(value)}`);
  return n;
}

function asBoolean(value: unknown, fallback: boolean): boolean {
  if (value === undefined || value === null || value === '') return fallback;
  return value === true || value === 'true';
}

/**
 * The plugin's parameters for a stage, as `${param:…}` resolves them: `--param name=value`
 * on the command line, then `params.<stage>`, then `params.default`.
 */
export function pluginParams(config: unknown, stage: string, cliParams: unknown = []): PluginParams {
  const raw: Record<string, unknown> = {
    ...Object(valueAt(config, 'params', 'default') ?? {}),
    ...Object(valueAt(config, 'params', stage) ?? {}),
  };
  for (const entry of Array.isArray(cliParams) ? cliParams : cliParams ? [cliParams] : []) {
    const at = String(entry).indexOf('=');
    if (at > 0) raw[String(entry).slice(0, at)] = String(entry).slice(at + 1);
  }
  const params: PluginParams = {
    functionUrls: asBoolean(raw.functionUrls, false),
    bearerTokenParameter: String(raw.bearerTokenParameter ?? ''),
    alarms: asBoolean(raw.alarms, true),
    alarmTopicArn: String(raw.alarmTopicArn ?? ''),
  };
  for (const key of ['provisionedConcurrency', 'throttleRate', 'throttleBurst'] as const) {
    const n = asNumber(raw[key], key);
    if (n !== undefined) params[key] = n;
  }
  const clusterAlarms = parseClusterAlarms(raw.clusterAlarms);
  if (clusterAlarms) params.clusterAlarms = clusterAlarms;
  const threshold = asNumber(raw.apiClientErrorsThreshold, 'apiClientErrorsThreshold');
  if (threshold === 0)
    throw new Error('param apiClientErrorsThreshold 0 would keep the alarm firing; use alarms: false for none');
  if (threshold !== undefined) params.apiClientErrorsThreshold = threshold;
  if (raw.reservedConcurrency === 'off' || raw.reservedConcurrency === false) params.reservedConcurrency = 'off';
  else {
    const n = asNumber(raw.reservedConcurrency, 'reservedConcurrency');
    if (n === 0)
      throw new Error('param reservedConcurrency 0 would disable every function; use off for no reservation');
    if (n !== undefined) params.reservedConcurrency = n;
  }
  return params;
}
