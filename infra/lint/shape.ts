// The shape of a webhook configuration or CRD as the API server's decoder checks it: field types
// before any rule of lint.ts applies.

import { isRecord } from '../json.ts';

/** A label selector whose field types webhookShapeProblems has checked (absent or null where not given). */
export interface ShapedSelector {
  [key: string]: unknown;
  matchLabels?: Record<string, unknown> | null;
  matchExpressions?: Array<{ key?: string | null; operator?: string | null; values?: unknown[] | null }> | null;
}

/** A clientConfig whose field types have been checked. */
export interface ShapedClientConfig {
  [key: string]: unknown;
  url?: string | null;
  service?: Record<string, unknown> | null;
  caBundle?: string | null;
}

/** A rule of a webhook whose field types have been checked (the lists' members are not). */
export interface ShapedRule {
  [key: string]: unknown;
  operations?: unknown[] | null;
  apiGroups?: unknown[] | null;
  apiVersions?: unknown[] | null;
  resources?: unknown[] | null;
  scope?: string | null;
}

/**
 * A webhook entry whose field types webhookShapeProblems found as the API server decodes them:
 * each field given has its type (or is null); the members of its lists are checked where read.
 */
export interface ShapedWebhook {
  [key: string]: unknown;
  name?: string | null;
  clientConfig?: ShapedClientConfig | null;
  rules?: ShapedRule[] | null;
  failurePolicy?: string | null;
  matchPolicy?: string | null;
  namespaceSelector?: ShapedSelector | null;
  objectSelector?: ShapedSelector | null;
  sideEffects?: string | null;
  timeoutSeconds?: number | null;
  admissionReviewVersions?: unknown[] | null;
  reinvocationPolicy?: string | null;
  matchConditions?: unknown;
}

/** The JSON type of a value as the API server's decoder names it in its errors. */
export function jsonType(value: unknown): string {
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'array';
  return typeof value === 'object' ? 'object' : typeof value;
}

/**
 * Fields of a webhook entry (and of a CRD's conversion) with the JSON type the API server decodes
 * them into: a value of another type makes it refuse the whole object, and the rules above would
 * misread it, so a field of the wrong type is one `shape` error and the entry is not linted further.
 */
const WEBHOOK_FIELD_TYPES: Record<string, string> = {
  name: 'string',
  clientConfig: 'object',
  rules: 'array',
  failurePolicy: 'string',
  matchPolicy: 'string',
  namespaceSelector: 'object',
  objectSelector: 'object',
  sideEffects: 'string',
  timeoutSeconds: 'number',
  admissionReviewVersions: 'array',
  reinvocationPolicy: 'string',
  matchConditions: 'array',
};
const CLIENT_CONFIG_FIELD_TYPES: Record<string, string> = { url: 'string', service: 'object', caBundle: 'string' };
const RULE_FIELD_TYPES: Record<string, string> = {
  operations: 'array',
  apiGroups: 'array',
  apiVersions: 'array',
  resources: 'array',
  scope: 'string',
};

/** Where `object`'s fields have another JSON type than `types` says (absent and null fields are fine). */
function typeProblems(object: Record<string, unknown>, types: Record<string, string>, at: string): string[] {
  const problems: string[] = [];
  for (const [field, type] of Object.entries(types)) {
    const value = object[field];
    if (value !== undefined && value !== null && jsonType(value) !== type)
      problems.push(
        `${at}${field} must be ${type === 'array' ? 'a list' : `a ${type === 'object' ? 'mapping' : type}`}, got ${jsonType(value)}`,
      );
  }
  return problems;
}

/** Type problems of one webhook entry, its clientConfig and its rules. */
export function webhookShapeProblems(webhook: unknown): string[] {
  if (!isRecord(webhook)) return [`must be a mapping, got ${jsonType(webhook)}`];
  const w = webhook;
  const problems = typeProblems(w, WEBHOOK_FIELD_TYPES, '');
  if (isRecord(w.clientConfig))
    problems.push(...typeProblems(w.clientConfig, CLIENT_CONFIG_FIELD_TYPES, 'clientConfig.'));
  for (const field of ['namespaceSelector', 'objectSelector']) {
    const selector = w[field];
    if (!isRecord(selector)) continue;
    problems.push(...typeProblems(selector, { matchLabels: 'object', matchExpressions: 'array' }, `${field}.`));
    if (!Array.isArray(selector.matchExpressions)) continue;
    selector.matchExpressions.forEach((expr: unknown, i: number) => {
      if (jsonType(expr) !== 'object')
        problems.push(`${field}.matchExpressions[${i}] must be a mapping, got ${jsonType(expr)}`);
      else
        problems.push(
          ...typeProblems(
            expr as Record<string, unknown>,
            { key: 'string', operator: 'string', values: 'array' },
            `${field}.matchExpressions[${i}].`,
          ),
        );
    });
  }
  if (Array.isArray(w.rules)) {
    w.rules.forEach((rule: unknown, i: number) => {
      if (jsonType(rule) !== 'object') problems.push(`rules[${i}] must be a mapping, got ${jsonType(rule)}`);
      else problems.push(...typeProblems(rule as Record<string, unknown>, RULE_FIELD_TYPES, `rules[${i}].`));
    });
  }
  return problems;
}

/** Type problems of a CRD's spec down to its conversion webhook's clientConfig. */
export function crdShapeProblems(crd: Record<string, unknown>): string[] {
  const spec = crd.spec;
  const conversion = isRecord(spec) ? spec.conversion : undefined;
  const webhook = isRecord(conversion) ? conversion.webhook : undefined;
  const path: Array<[string, unknown]> = [['spec', spec]];
  if (isRecord(spec)) path.push(['spec.conversion', conversion]);
  if (isRecord(conversion)) path.push(['spec.conversion.webhook', webhook]);
  if (isRecord(webhook)) path.push(['spec.conversion.webhook.clientConfig', webhook.clientConfig]);
  const problems = path
    .filter(([, value]) => value !== undefined && value !== null && jsonType(value) !== 'object')
    .map(([at, value]) => `${at} must be a mapping, got ${jsonType(value)}`);
  if (!problems.length && isRecord(webhook)) {
    problems.push(...typeProblems(webhook, { conversionReviewVersions: 'array' }, 'spec.conversion.webhook.'));
    if (isRecord(webhook.clientConfig))
      problems.push(
        ...typeProblems(webhook.clientConfig, CLIENT_CONFIG_FIELD_TYPES, 'spec.conversion.webhook.clientConfig.'),
      );
  }
  return problems;
}
