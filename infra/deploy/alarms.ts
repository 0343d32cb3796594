// What keeps a flood from hurting the account: HTTP API throttling per route, and the CloudWatch
// alarms on each function's errors, throttles and duration and on the API's client errors.
import type { Registration } from '../../lib/internal.ts';
import { clusterAlarmsFor } from '../fleet/alarms.ts';
import type { PluginParams } from './params.ts';

/**
 * Requests per second the HTTP API lets through to a function, per unit of its reserved
 * concurrency: a warm review answers in well under 200 ms, so one execution environment
 * serves about 5 a second; more than that would only be throttled by Lambda instead.
 */
export const THROTTLE_RATE_PER_CONCURRENCY = 5;
/** The HTTP API's burst (token bucket size) as a multiple of the rate: room for a deploy's or a controller's spike. */
export const THROTTLE_BURST_FACTOR = 2;
/** The duration alarm fires when p99 Lambda duration passes this share of the webhook timeout (the API server gives up at the timeout). */
export const DURATION_ALARM_SHARE = 0.8;

/**
 * 4xx answers per minute on the HTTP API stage at which its client-errors alarm fires. The API
 * server's own calls get none (a 429 only once a route's throttle is reached); anyone without
 * the secret gets 404s. One a second on average over a minute lets a stray probe pass and
 * catches a flood, which at the default throttle is thousands a minute.
 */
export const DEFAULT_API_CLIENT_ERRORS_THRESHOLD = 60;

/** What the template additions need to know of one deployed function. */
export interface DeployedFunction {
  registration: Registration;
  /** CloudFormation logical id of its AWS::Lambda::Function. */
  lambdaLogicalId: string;
  /** Prefix for the logical ids of its alarms. */
  logicalIdPrefix: string;
  /** Its reserved concurrency as finally configured (DEFAULT_RESERVED_CONCURRENCY when none is reserved, for the throttle). */
  reservedConcurrency: number;
  /** Its HTTP API route keys (`POST /pod-policy/{secret}`). */
  routeKeys: string[];
}

/** Per-route HTTP API throttling of a function: its own params, else derived from its reserved concurrency. */
export function throttleFor(reservedConcurrency: number, params: PluginParams): { rate: number; burst: number } {
  const rate = params.throttleRate ?? Math.max(1, reservedConcurrency) * THROTTLE_RATE_PER_CONCURRENCY;
  return { rate, burst: params.throttleBurst ?? rate * THROTTLE_BURST_FACTOR };
}

/** A CloudFormation resource as the template additions write it. */
export type CfnResource = {
  Type: string;
  Properties: Record<string, unknown>;
};

/** CloudFormation resources by logical id. */
export type CfnResources = Record<string, CfnResource>;

/** The HTTP API stage of a compiled template, as the additions read and change it. */
interface StageResource {
  Properties: {
    ApiId?: unknown;
    StageName?: unknown;
    RouteSettings?: Record<string, unknown>;
    DefaultRouteSettings?: Record<string, unknown>;
  };
  DependsOn?: unknown;
}

/** A compiled CloudFormation template: its resources, by logical id (the additions read those they know). */
export interface CfnTemplate {
  Resources?: Record<string, unknown>;
}

/** A CloudWatch alarm that fires at or above its threshold in one period, notifying `actions` when given. */
function alarm(description: string, props: Record<string, unknown>, actions: string): CfnResource {
  return {
    Type: 'AWS::CloudWatch::Alarm',
    Properties: {
      AlarmDescription: description,
      ComparisonOperator: 'GreaterThanOrEqualToThreshold',
      EvaluationPeriods: 1,
      // No data means no calls: nothing to alarm on.
      TreatMissingData: 'notBreaching',
      ...(actions ? { AlarmActions: [actions], OKActions: [actions] } : {}),
      ...props,
    },
  };
}

/** The alarms of one function: errors and timeouts, p99 duration near the webhook timeout, throttles. */
export function alarmsFor(fn: DeployedFunction, namespace: string, params: PluginParams): CfnResources {
  const name = fn.registration.name;
  const functionName = { Ref: fn.lambdaLogicalId };
  const lambdaMetric = (id: string, metric: string) => ({
    Id: id,
    ReturnData: false,
    MetricStat: {
      Metric: {
        Namespace: 'AWS/Lambda',
        MetricName: metric,
        Dimensions: [{ Name: 'FunctionName', Value: functionName }],
      },
      Period: 60,
      Stat: 'Sum',
    },
  });
  const reviewMetric = (id: string, metric: string) => ({
    Id: id,
    ReturnData: false,
    MetricStat: {
      Metric: { Namespace: namespace, MetricName: metric, Dimensions: [{ Name: 'webhook', Value: name }] },
      Period: 60,
      Stat: 'Sum',
    },
  });
  const thresholdMs = Math.round(fn.registration.timeoutSeconds * 1000 * DURATION_ALARM_SHARE);
  return {
    [`${fn.logicalIdPrefix}ErrorsAlarm`]: alarm(
      `${name}: reviews that errored or timed out, requests refused because authentication is misconfigured, adapter faults, or invocations that failed`,
      {
        Threshold: 1,
        Metrics: [
          reviewMetric('errored', 'Errored'),
          reviewMetric('timedout', 'TimedOut'),
          // A missing or unreadable secret parameter answers every call 500 without any review failing.
          reviewMetric('misconfigured', 'AuthMisconfigured'),
          reviewMetric('fault', 'AdapterFault'),
          lambdaMetric('failed', 'Errors'),
          {
            Id: 'failures',
            Label: 'errors and timeouts',
            ReturnData: true,
            Expression:
              'FILL(errored, 0) + FILL(timedout, 0) + FILL(misconfigured, 0) + FILL(fault, 0) + FILL(failed, 0)',
          },
        ],
      },
      params.alarmTopicArn,
    ),
    [`${fn.logicalIdPrefix}DurationAlarm`]: alarm(
      `${name}: p99 duration above ${DURATION_ALARM_SHARE * 100}% of the webhook timeout (${fn.registration.timeoutSeconds} s)`,
      {
        Namespace: 'AWS/Lambda',
        MetricName: 'Duration',
        Dimensions: [{ Name: 'FunctionName', Value: functionName }],
        ExtendedStatistic: 'p99',
        Period: 300,
        Threshold: thresholdMs,
        ComparisonOperator: 'GreaterThanThreshold',
      },
      params.alarmTopicArn,
    ),
    [`${fn.logicalIdPrefix}ThrottlesAlarm`]: alarm(
      `${name}: invocations throttled (reserved concurrency reached)`,
      {
        Namespace: 'AWS/Lambda',
        MetricName: 'Throttles',
        Dimensions: [{ Name: 'FunctionName', Value: functionName }],
        Statistic: 'Sum',
        Period: 60,
        Threshold: 1,
      },
      params.alarmTopicArn,
    ),
  };
}

/**
 * The alarms of the HTTP API stage, on the API Gateway metrics of HTTP APIs (`4xx`, `5xx`, per
 * ApiId and Stage): requests refused at the edge or by the functions (a wrong or missing path
 * secret is a 404; a throttled request a 429, which HTTP APIs count in `4xx` and have no metric
 * of their own for), and server errors (a failed or throttled Lambda invocation).
 */
export function apiAlarms(stage: Pick<StageResource, 'Properties'>, params: PluginParams): CfnResources {
  const dimensions = [
    { Name: 'ApiId', Value: stage.Properties.ApiId },
    { Name: 'Stage', Value: stage.Properties.StageName },
  ];
  const metric = (name: string) => ({
    Namespace: 'AWS/ApiGateway',
    MetricName: name,
    Dimensions: dimensions,
    Statistic: 'Sum',
    Period: 60,
  });
  const threshold = params.apiClientErrorsThreshold ?? DEFAULT_API_CLIENT_ERRORS_THRESHOLD;
  return {
    HttpApiClientErrorsAlarm: alarm(
      `HTTP API: ${threshold} or more 4xx answers in a minute (wrong or missing path secrets, or requests throttled with 429)`,
      { ...metric('4xx'), Threshold: threshold },
      params.alarmTopicArn,
    ),
    HttpApiServerErrorsAlarm: alarm(
      "HTTP API: 5xx answers (a function's 500, an invocation that failed, timed out or was throttled)",
      { ...metric('5xx'), Threshold: 1 },
      params.alarmTopicArn,
    ),
  };
}

/**
 * Adds flood safety and alarms to a compiled CloudFormation template: per-route throttling on
 * the HTTP API stage (the stage waits for the routes, which must exist before their
 * settings), each function's alarms, and the stage's.
 */
export function addFloodSafetyAndAlarms(
  template: CfnTemplate,
  functions: DeployedFunction[],
  params: PluginParams,
  namespace: string,
  clusters: readonly string[] = [],
): void {
  const resources = (template.Resources ??= {});
  const stage = resources.HttpApiStage as StageResource | undefined;
  if (stage) {
    const routeSettings: Record<string, unknown> = { ...(stage.Properties.RouteSettings ?? {}) };
    const routeIds: string[] = [];
    let defaultRate = 0;
    for (const fn of functions) {
      const { rate, burst } = throttleFor(fn.reservedConcurrency, params);
      defaultRate = Math.max(defaultRate, rate);
      for (const key of fn.routeKeys) routeSettings[key] = { ThrottlingRateLimit: rate, ThrottlingBurstLimit: burst };
    }
    for (const [id, resource] of Object.entries(resources)) {
      const route = resource as { Type?: unknown; Properties?: { RouteKey?: unknown } } | null | undefined;
      if (route?.Type === 'AWS::ApiGatewayV2::Route' && routeSettings[route.Properties?.RouteKey as string])
        routeIds.push(id);
    }
    stage.Properties.RouteSettings = routeSettings;
    // Routes the functions do not have (the default route too) answer 404 without invoking anything; keep them within the same bounds.
    stage.Properties.DefaultRouteSettings = {
      ...(stage.Properties.DefaultRouteSettings ?? {}),
      ThrottlingRateLimit: defaultRate || 1,
      ThrottlingBurstLimit: (defaultRate || 1) * THROTTLE_BURST_FACTOR,
    };
    stage.DependsOn = [
      ...new Set([
        ...(Array.isArray(stage.DependsOn) ? stage.DependsOn : stage.DependsOn ? [stage.DependsOn] : []),
        ...routeIds,
      ]),
    ];
  }
  if (!params.alarms) return;
  for (const fn of functions) Object.assign(resources, alarmsFor(fn, namespace, params));
  const clusterAlarm = (description: string, props: Record<string, unknown>) =>
    alarm(description, props, params.alarmTopicArn);
  for (const fn of functions)
    Object.assign(resources, clusterAlarmsFor(fn, clusters, namespace, DURATION_ALARM_SHARE, clusterAlarm));
  if (stage?.Properties?.ApiId && stage.Properties.StageName) Object.assign(resources, apiAlarms(stage, params));
}
