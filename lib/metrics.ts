/**
 * Per-review metrics in CloudWatch Embedded Metric Format (EMF), carried by the `review` log
 * line itself: CloudWatch Logs extracts them, so there is no extra call, line or serialisation.
 *
 * Written directly rather than with Powertools for AWS Lambda (Metrics): measured with esbuild
 * (minified, node20), Powertools Metrics 2.36 adds 15.3 KB to a function's bundle and writes
 * its metrics as a line of its own (publishStoredMetrics), where the metrics belong in the
 * review's own line; the format needs only the few members below.
 * Specification: https://docs.aws.amazon.com/AmazonCloudWatch/latest/monitoring/CloudWatch_Embedded_Metric_Format_Specification.html
 */
import { RawJson } from './log.ts';
import type { Registration } from './registration.ts';

/** Default CloudWatch namespace of the metrics; KLW_METRICS_NAMESPACE overrides it. */
export const DEFAULT_METRICS_NAMESPACE = 'KubeLambdaWebhooks';
/** Environment variable naming the CloudWatch namespace; `off` writes no metrics. */
export const METRICS_NAMESPACE_ENV = 'KLW_METRICS_NAMESPACE';

/** Admission metrics: the duration and one 0/1 count per decision, so each can be summed and alarmed on. */
export const ADMISSION_METRICS = [
  'Duration',
  'Allowed',
  'Denied',
  'Patched',
  'Errored',
  'TimedOut',
  'WouldDeny',
] as const;
/** Conversion metrics: the duration, the objects converted and a 0/1 count of failed reviews. */
export const CONVERSION_METRICS = ['Duration', 'Objects', 'Failures', 'Errored', 'TimedOut'] as const;

/**
 * Metrics of requests that never became a review, carried by their own log line: a refusal by
 * caller authentication (`Unauthenticated` for a missing or wrong secret or token, 401 or 404;
 * `AuthMisconfigured` for a configuration that cannot work, 500) or a fault of the adapter
 * itself (`AdapterFault`, 500). Each is a 0/1 count per request, per webhook.
 */
export const REQUEST_METRICS = ['Unauthenticated', 'AuthMisconfigured', 'AdapterFault'] as const;
/** The metrics of a refusal by caller authentication's line. */
const REFUSAL_METRICS = REQUEST_METRICS.filter((name) => name !== 'AdapterFault');
/** The metrics of an adapter fault's line. */
const FAULT_METRICS = REQUEST_METRICS.filter((name) => name === 'AdapterFault');

/** The metrics namespace from the environment (KLW_METRICS_NAMESPACE), or undefined when it is `off`. */
function metricsNamespace(env: NodeJS.ProcessEnv): string | undefined {
  const namespace = env[METRICS_NAMESPACE_ENV]?.trim() || DEFAULT_METRICS_NAMESPACE;
  return namespace === 'off' ? undefined : namespace;
}

/** How a user function's run failed, as the engines report it to the handler. */
export type FailureKind = 'error' | 'timeout';

/** One metric directive, fixed per registration (only the timestamp changes per review). */
interface Directive {
  Namespace: string;
  Dimensions: string[][];
  Metrics: Array<{ Name: string; Unit: 'Milliseconds' | 'Count' }>;
}

/**
 * Writes the EMF members of one review's log line for a registration into `line`, as spreading
 * them over it would (a member it already has keeps its place and takes the new value).
 */
export type MetricsWriter = (
  line: Record<string, unknown>,
  fields: Record<string, unknown>,
  durationMs: number,
  failure: FailureKind | undefined,
) => void;

const none: MetricsWriter = () => {};

/**
 * The metrics writer of a registration: the members to merge into the `review` line.
 * Dimensions refer to the line's `webhook` member (and `operation` for admission), which
 * the writer sets itself; `KLW_METRICS_NAMESPACE=off` turns metrics off. With `raw`, for a
 * logger that writes RawJson (writesRawJson), `_aws` is its JSON text, the fixed directives
 * written once. A function serving a fleet (`fleet`) adds the `cluster` dimension.
 */
export function metricsFor(
  registration: Registration,
  env: NodeJS.ProcessEnv = process.env,
  raw = false,
  fleet = false,
): MetricsWriter {
  const namespace = metricsNamespace(env);
  if (!namespace) return none;
  const webhook = registration.name;
  const admission = registration.type !== 'conversion';
  const names = admission ? ADMISSION_METRICS : CONVERSION_METRICS;
  const directive: Directive = {
    Namespace: namespace,
    // Per webhook and operation, and per webhook across operations (for alarms on the whole webhook).
    // A fleet function adds per webhook and cluster (names from KLW_FLEET or `unknown`: bounded).
    Dimensions: [
      ...(admission ? [['webhook', 'operation'], ['webhook']] : [['webhook']]),
      ...(fleet ? [['webhook', 'cluster']] : []),
    ],
    Metrics: names.map((Name) => ({ Name, Unit: Name === 'Duration' ? 'Milliseconds' : 'Count' })),
  };
  const directives = [directive];
  const directivesJson = JSON.stringify(directives);
  // The same members as the object, in the same order; a timestamp is an integer, written alike.
  const aws = raw
    ? () => new RawJson(`{"Timestamp":${Date.now()},"CloudWatchMetrics":${directivesJson}}`)
    : () => ({ Timestamp: Date.now(), CloudWatchMetrics: directives });
  if (admission) {
    return (line, fields, durationMs, failure) => {
      // Decisions count the user function's own answers; a failure counts only as Errored or TimedOut.
      const decision = failure ? undefined : fields.decision;
      line.webhook = webhook;
      line.operation = typeof fields.operation === 'string' ? fields.operation : 'UNKNOWN';
      line._aws = aws();
      line.Duration = durationMs;
      line.Allowed = decision === 'allowed' ? 1 : 0;
      line.Denied = decision === 'denied' ? 1 : 0;
      line.Patched = decision === 'patched' ? 1 : 0;
      line.Errored = failure === 'error' ? 1 : 0;
      line.TimedOut = failure === 'timeout' ? 1 : 0;
      line.WouldDeny = fields.wouldDeny === true ? 1 : 0;
    };
  }
  return (line, fields, durationMs, failure) => {
    line.webhook = webhook;
    line._aws = aws();
    line.Duration = durationMs;
    line.Objects = typeof fields.objects === 'number' ? fields.objects : 0;
    line.Failures = fields.result === 'Failed' ? 1 : 0;
    line.Errored = failure === 'error' ? 1 : 0;
    line.TimedOut = failure === 'timeout' ? 1 : 0;
  };
}

/** Builds the EMF members of the log line of a request that never became a review. */
export interface RequestMetricsWriter {
  /** For a request refused by caller authentication with this HTTP status. */
  refusal(status: number): Record<string, unknown>;
  /** For a request the adapter itself failed on. */
  fault(): Record<string, unknown>;
}

/**
 * The request metrics writer of a registration: the members to merge into a refusal's or an
 * adapter fault's line, with the `webhook` dimension only (no review was read, so there is no
 * operation); `KLW_METRICS_NAMESPACE=off` turns them off too.
 */
export function requestMetricsFor(
  registration: Registration,
  env: NodeJS.ProcessEnv = process.env,
): RequestMetricsWriter {
  const namespace = metricsNamespace(env);
  if (!namespace) return { refusal: () => ({}), fault: () => ({}) };
  const webhook = registration.name;
  const directive = (names: readonly string[]): Directive[] => [
    { Namespace: namespace, Dimensions: [['webhook']], Metrics: names.map((Name) => ({ Name, Unit: 'Count' })) },
  ];
  const refusals = directive(REFUSAL_METRICS);
  const faults = directive(FAULT_METRICS);
  return {
    refusal: (status) => ({
      webhook,
      _aws: { Timestamp: Date.now(), CloudWatchMetrics: refusals },
      Unauthenticated: status === 401 || status === 404 ? 1 : 0,
      AuthMisconfigured: status >= 500 ? 1 : 0,
    }),
    fault: () => ({ webhook, _aws: { Timestamp: Date.now(), CloudWatchMetrics: faults }, AdapterFault: 1 }),
  };
}
