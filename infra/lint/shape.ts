import type { Json } from '../json.ts';
// The shape of a webhook configuration or CRD as the API server's decoder checks it: field types
// before any rule of lint.ts applies.

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
function typeProblems(object: Json, types: Record<string, string>, at: string): string[] {
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
  if (jsonType(webhook) !== 'object') return [`must be a mapping, got ${jsonType(webhook)}`];
  const w = webhook as Json;
  const problems = typeProblems(w, WEBHOOK_FIELD_TYPES, '');
  if (jsonType(w.clientConfig) === 'object')
    problems.push(...typeProblems(w.clientConfig, CLIENT_CONFIG_FIELD_TYPES, 'clientConfig.'));
  for (const field of ['namespaceSelector', 'objectSelector']) {
    const selector = w[field];
    if (jsonType(selector) !== 'object') continue;
    problems.push(...typeProblems(selector, { matchLabels: 'object', matchExpressions: 'array' }, `${field}.`));
    if (!Array.isArray(selector.matchExpressions)) continue;
    selector.matchExpressions.forEach((expr: unknown, i: number) => {
      if (jsonType(expr) !== 'object')
        problems.push(`${field}.matchExpressions[${i}] must be a mapping, got ${jsonType(expr)}`);
      else
        problems.push(
          ...typeProblems(
            expr as Json,
            { key: 'string', operator: 'string', values: 'array' },
            `${field}.matchExpressions[${i}].`,
          ),
        );
    });
  }
  if (Array.isArray(w.rules)) {
    w.rules.forEach((rule: unknown, i: number) => {
      if (jsonType(rule) !== 'object') problems.push(`rules[${i}] must be a mapping, got ${jsonType(rule)}`);
      else problems.push(...typeProblems(rule as Json, RULE_FIELD_TYPES, `rules[${i}].`));
    });
  }
  return problems;
}

/** Type problems of a CRD's spec down to its conversion webhook's clientConfig. */
export function crdShapeProblems(crd: Json): string[] {
  const path: Array<[string, unknown]> = [['spec', crd.spec]];
  if (jsonType(crd.spec) === 'object') path.push(['spec.conversion', crd.spec.conversion]);
  if (jsonType(crd.spec?.conversion) === 'object') path.push(['spec.conversion.webhook', crd.spec.conversion.webhook]);
  if (jsonType(crd.spec?.conversion?.webhook) === 'object')
    path.push(['spec.conversion.webhook.clientConfig', crd.spec.conversion.webhook.clientConfig]);
  const problems = path
    .filter(([, value]) => value !== undefined && value !== null && jsonType(value) !== 'object')
    .map(([at, value]) => `${at} must be a mapping, got ${jsonType(value)}`);
  const webhook = crd.spec?.conversion?.webhook;
  if (!problems.length && jsonType(webhook) === 'object') {
    problems.push(...typeProblems(webhook, { conversionReviewVersions: 'array' }, 'spec.conversion.webhook.'));
    if (jsonType(webhook.clientConfig) === 'object')
      problems.push(
        ...typeProblems(webhook.clientConfig, CLIENT_CONFIG_FIELD_TYPES, 'spec.conversion.webhook.clientConfig.'),
      );
  }
  return problems;
}
