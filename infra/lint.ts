import { isDns1123Subdomain } from '../lib/k8s/names.ts';
import { checkMatchConditions } from '../lib/matchconditions/rules.ts';
import type { CelKubeVersion } from '../packages/kube-cel/src/index.ts';
import { type LabelSelector, type Registration, selectorMatches } from '../lib/internal.ts';
import { checkWebhookUrl, unknownCrds } from './manifests.ts';
import { PATH_SECRET_PLACEHOLDER } from './secrets/index.ts';
import { KlwError } from './errors.ts';
import { readDocuments } from './output.ts';
import { lintRuleResources } from './lint/rules.ts';
import { stringAt } from './json.ts';
import type { KubeDocument } from './output.ts';
import {
  crdShapeProblems,
  jsonType,
  type ShapedRule,
  type ShapedSelector,
  type ShapedWebhook,
  webhookShapeProblems,
} from './lint/shape.ts';
import type { Finding } from './lint/finding.ts';

export type { Finding } from './lint/finding.ts';

/** Timeouts above this hold the API server's request path too long (good practices). */
export const SLOW_TIMEOUT_SECONDS = 10;

const OPERATIONS = ['CREATE', 'UPDATE', 'DELETE', 'CONNECT', '*'];

/**
 * Resources webhooks must not gate (good practices): leases keep nodes and leader election
 * alive, and TokenReview/SubjectAccessReview are what the API server itself relies on.
 */
const PROTECTED = [
  { group: 'coordination.k8s.io', resource: 'leases' },
  { group: 'authentication.k8s.io', resource: 'tokenreviews' },
  { group: 'authorization.k8s.io', resource: 'subjectaccessreviews' },
];

function lintSelector(
  selector: ShapedSelector | null | undefined,
  field: string,
  add: (level: Finding['level'], rule: string, message: string) => void,
): void {
  for (const expr of selector?.matchExpressions ?? []) {
    const hasValues = (expr.values?.length ?? 0) > 0;
    if ((expr.operator === 'In' || expr.operator === 'NotIn') && !hasValues)
      add('error', 'selector-values', `${field}: operator ${expr.operator} needs values`);
    if ((expr.operator === 'Exists' || expr.operator === 'DoesNotExist') && hasValues)
      add('error', 'selector-values', `${field}: operator ${expr.operator} takes no values`);
    if (!['In', 'NotIn', 'Exists', 'DoesNotExist'].includes(expr.operator as string))
      add('error', 'selector-operator', `${field}: unknown operator ${JSON.stringify(expr.operator)}`);
  }
}

function lintList(
  list: unknown,
  field: string,
  add: (level: Finding['level'], rule: string, message: string) => void,
): list is string[] {
  if (!Array.isArray(list) || list.length === 0) {
    add('error', 'rule-fields', `${field} must be a non-empty list`);
    return false;
  }
  if (list.includes('*') && list.length > 1) add('error', 'rule-wildcard', `${field}: "*" must be the only entry`);
  if (list.some((v) => typeof v !== 'string')) add('error', 'rule-fields', `${field} must hold strings`);
  return true;
}

function lintResources(
  resources: string[],
  field: string,
  add: (level: Finding['level'], rule: string, message: string) => void,
): void {
  for (const r of resources) {
    if (!r) add('error', 'rule-resources', `${field}: empty resource name`);
    else if (r.split('/').length > 2)
      add('error', 'rule-resources', `${field}: ${JSON.stringify(r)} has more than one "/"`);
  }
  if (resources.includes('*/*') && resources.length > 1)
    add('error', 'rule-resources', `${field}: "*/*" must be the only entry`);
  if (resources.includes('*') && resources.some((r) => r !== '*' && !r.includes('/')))
    add('error', 'rule-resources', `${field}: "*" covers every resource; list no others beside it`);
}

/** Rule id of a URL still holding the path secret placeholder; `klw manifests` writes it there on purpose. */
export const PLACEHOLDER_RULE = 'path-secret-placeholder';

/** The problem of a clientConfig.url: the placeholder (with its fix), else the API server's URL rules. */
function urlProblem(url: string): [rule: string, message: string] | undefined {
  if (url.includes(PATH_SECRET_PLACEHOLDER.slice(0, PATH_SECRET_PLACEHOLDER.indexOf('?')))) {
    return [
      PLACEHOLDER_RULE,
      'clientConfig.url holds the path secret placeholder, which the API server refuses: write the manifests with ' +
        '`klw manifests --path-secret ssm --stage <stage>` (deployed) or `--path-secret local` (emulator), ' +
        'or replace the placeholder with the secret',
    ];
  }
  const problem = checkWebhookUrl(url);
  return problem ? ['client-config-url', problem] : undefined;
}

/** Lints one admission webhook entry of a configuration. */
export function lintWebhook(
  webhook: ShapedWebhook,
  kind: 'MutatingWebhookConfiguration' | 'ValidatingWebhookConfiguration',
  kubeVersion?: CelKubeVersion,
): Finding[] {
  const findings: Finding[] = [];
  const subject = typeof webhook.name === 'string' ? webhook.name : '(unnamed webhook)';
  const add = (level: Finding['level'], rule: string, message: string) =>
    findings.push({ level, rule, subject, message });

  if (typeof webhook.name !== 'string' || !isDns1123Subdomain(webhook.name))
    add('error', 'webhook-name', 'name must be a DNS subdomain');
  else if (webhook.name.split('.').length < 3)
    add('error', 'webhook-name', 'name must have at least three segments separated by dots');

  const cc = webhook.clientConfig ?? {};
  if ((cc.url === undefined) === (cc.service === undefined))
    add('error', 'client-config', 'clientConfig needs exactly one of url or service');
  if (typeof cc.url === 'string') {
    const problem = urlProblem(cc.url);
    if (problem) add('error', ...problem);
  }
  if (cc.caBundle !== undefined && !/^[A-Za-z0-9+/]*={0,2}$/.test(cc.caBundle as string))
    add('error', 'client-config-ca', 'caBundle must be base64');

  const timeout = webhook.timeoutSeconds ?? 10;
  if (!Number.isInteger(timeout) || timeout < 1 || timeout > 30)
    add('error', 'timeout-range', `timeoutSeconds must be a whole number from 1 to 30, got ${timeout}`);
  else if (timeout > SLOW_TIMEOUT_SECONDS)
    add(
      'warning',
      'timeout-long',
      `timeoutSeconds ${timeout} holds API requests for long; keep it at ${SLOW_TIMEOUT_SECONDS} or less`,
    );

  if (webhook.sideEffects === undefined) add('error', 'side-effects', 'sideEffects is required');
  else if (!['None', 'NoneOnDryRun'].includes(webhook.sideEffects as string))
    add(
      'error',
      'side-effects',
      `sideEffects must be None or NoneOnDryRun in v1, got ${JSON.stringify(webhook.sideEffects)}`,
    );

  const versions = webhook.admissionReviewVersions;
  if (!Array.isArray(versions) || versions.length === 0)
    add('error', 'review-versions', 'admissionReviewVersions is required');
  else {
    if (!versions.includes('v1') && !versions.includes('v1beta1'))
      add('error', 'review-versions', 'admissionReviewVersions must include v1 or v1beta1');
    if (new Set(versions).size !== versions.length)
      add('error', 'review-versions', 'admissionReviewVersions has duplicates');
  }

  lintPolicies(webhook, kind, add);

  lintRules(webhook, add);

  lintSelector(webhook.namespaceSelector, 'namespaceSelector', add);
  lintSelector(webhook.objectSelector, 'objectSelector', add);
  // Shape-checked: a selector's fields have their types (its members are read with care).
  const namespaceSelector = webhook.namespaceSelector as LabelSelector | undefined;
  if (selectorMatches(namespaceSelector, { 'kubernetes.io/metadata.name': 'kube-system' })) {
    add(
      'warning',
      'system-namespaces',
      'namespaceSelector does not exclude kube-system; a broken webhook there can take the control plane down',
    );
  }

  for (const p of checkMatchConditions(webhook.matchConditions, { kubeVersion })) add(p.level, p.rule, p.message);
  return findings;
}

/** Adds one finding about the webhook being linted. */
type AddFinding = (level: Finding['level'], rule: string, message: string) => void;

/** Lints a webhook's failurePolicy, matchPolicy and (mutating) reinvocationPolicy. */
function lintPolicies(
  webhook: ShapedWebhook,
  kind: 'MutatingWebhookConfiguration' | 'ValidatingWebhookConfiguration',
  add: AddFinding,
): void {
  const failurePolicy = webhook.failurePolicy ?? 'Fail';
  if (!['Fail', 'Ignore'].includes(failurePolicy))
    add('error', 'failure-policy', `failurePolicy must be Fail or Ignore, got ${JSON.stringify(failurePolicy)}`);
  else if (kind === 'MutatingWebhookConfiguration' && failurePolicy === 'Fail')
    add(
      'warning',
      'mutating-fails-closed',
      'a mutating webhook that fails closed blocks requests whenever it is down; prefer failurePolicy Ignore and validate the result',
    );

  const matchPolicy = webhook.matchPolicy ?? 'Equivalent';
  if (!['Exact', 'Equivalent'].includes(matchPolicy))
    add('error', 'match-policy', `matchPolicy must be Exact or Equivalent, got ${JSON.stringify(matchPolicy)}`);
  else if (matchPolicy === 'Exact')
    add(
      'warning',
      'match-policy-exact',
      'matchPolicy Exact misses requests made through other versions of the same resources; prefer Equivalent',
    );

  if (
    kind === 'MutatingWebhookConfiguration' &&
    webhook.reinvocationPolicy !== undefined &&
    !['Never', 'IfNeeded'].includes(webhook.reinvocationPolicy as string)
  ) {
    add(
      'error',
      'reinvocation-policy',
      `reinvocationPolicy must be Never or IfNeeded, got ${JSON.stringify(webhook.reinvocationPolicy)}`,
    );
  }
}

/** Lints a webhook's rules: their lists, operations, scope, and the resources no webhook should hold up. */
function lintRules(webhook: ShapedWebhook, add: AddFinding): void {
  const rules: ShapedRule[] = Array.isArray(webhook.rules) ? webhook.rules : [];
  rules.forEach((rule, i) => {
    const at = `rules[${i}]`;
    if (lintList(rule.operations, `${at}.operations`, add)) {
      for (const op of rule.operations)
        if (!OPERATIONS.includes(op))
          add('error', 'rule-operations', `${at}.operations: unknown operation ${JSON.stringify(op)}`);
    }
    lintList(rule.apiGroups, `${at}.apiGroups`, add);
    lintList(rule.apiVersions, `${at}.apiVersions`, add);
    if (Array.isArray(rule.resources) && rule.resources.length)
      lintResources(rule.resources as string[], `${at}.resources`, add);
    else add('error', 'rule-fields', `${at}.resources must be a non-empty list`);
    if (rule.scope !== undefined && !['Cluster', 'Namespaced', '*'].includes(rule.scope as string))
      add('error', 'rule-scope', `${at}.scope must be Cluster, Namespaced or *`);
    for (const p of PROTECTED) {
      const groupHit = rule.apiGroups?.includes('*') || rule.apiGroups?.includes(p.group);
      const resourceHit = (rule.resources as string[] | null | undefined)?.some(
        (r) => r === '*' || r === '*/*' || r === p.resource || r.startsWith(`${p.resource}/`),
      );
      if (groupHit && resourceHit)
        add(
          'warning',
          'protected-resources',
          `${at} matches ${p.resource}.${p.group}; webhooks on it can stall the cluster`,
        );
    }
  });
  if (!rules.length) add('warning', 'no-rules', 'the webhook has no rules and is never called');
}

/** A CRD whose spec down to its conversion webhook's clientConfig crdShapeProblems has checked. */
interface ShapedCrd {
  metadata?: { name?: string };
  spec?: {
    conversion?: {
      strategy?: unknown;
      webhook?: { clientConfig?: { url?: unknown; service?: unknown } | null; conversionReviewVersions?: unknown[] };
    } | null;
  } | null;
}

/** Lints a CRD's webhook conversion. */
function lintCrd(crd: ShapedCrd): Finding[] {
  const findings: Finding[] = [];
  const subject = crd.metadata?.name ?? '(unnamed CRD)';
  const conversion = crd.spec?.conversion;
  if (conversion?.strategy !== 'Webhook') return findings;
  const add = (rule: string, message: string) => findings.push({ level: 'error', rule, subject, message });
  const cc = conversion.webhook?.clientConfig;
  if (!cc) add('conversion-client-config', 'strategy Webhook needs webhook.clientConfig');
  else if ((cc.url === undefined) === (cc.service === undefined))
    add('conversion-client-config', 'clientConfig needs exactly one of url or service');
  else if (typeof cc.url === 'string') {
    const problem = urlProblem(cc.url);
    if (problem) add(...problem);
  }
  const versions = conversion.webhook?.conversionReviewVersions;
  if (!Array.isArray(versions) || (!versions.includes('v1') && !versions.includes('v1beta1')))
    add('review-versions', 'conversionReviewVersions must include v1 or v1beta1');
  return findings;
}

/** Lints manifests: webhook configurations and CRDs with webhook conversion (CEL as `kubeVersion`'s API server). */
export function lintDocuments(documents: readonly KubeDocument[], kubeVersion?: CelKubeVersion): Finding[] {
  const findings: Finding[] = [];
  for (const doc of documents) {
    const name = stringAt(doc, 'metadata', 'name') ?? '(unnamed)';
    const kind = doc?.kind;
    if (kind === 'MutatingWebhookConfiguration' || kind === 'ValidatingWebhookConfiguration') {
      if (doc.webhooks !== undefined && doc.webhooks !== null && !Array.isArray(doc.webhooks)) {
        findings.push({
          level: 'error',
          rule: 'shape',
          subject: `${doc.kind} ${name}`,
          message: `webhooks must be a list, got ${jsonType(doc.webhooks)}`,
        });
        continue;
      }
      const webhooks: unknown[] = (doc.webhooks as unknown[] | null | undefined) ?? [];
      const names = new Set<string>();
      webhooks.forEach((w, i) => {
        const problems = webhookShapeProblems(w);
        if (problems.length) {
          const label = stringAt(w, 'name') ?? `${doc.kind} ${name} webhooks[${i}]`;
          for (const message of problems) findings.push({ level: 'error', rule: 'shape', subject: label, message });
          return;
        }
        // Its fields have the types the API server decodes them into (the name a string where given).
        const hook = w as ShapedWebhook;
        const hookName = hook.name as string;
        if (names.has(hookName))
          findings.push({
            level: 'error',
            rule: 'webhook-name-unique',
            subject: hookName,
            message: `webhook name is not unique in ${kind} ${name}`,
          });
        names.add(hookName);
        findings.push(...lintWebhook(hook, kind, kubeVersion));
      });
    } else if (kind === 'CustomResourceDefinition') {
      const problems = crdShapeProblems(doc);
      for (const message of problems) findings.push({ level: 'error', rule: 'shape', subject: name, message });
      if (!problems.length) findings.push(...lintCrd(doc as ShapedCrd));
    }
  }
  findings.push(...lintRuleResources(documents));
  return findings;
}

/** Lints registrations for what the manifests would silently leave out: a conversion function's unknown CRD. */
export function lintRegistrations(registrations: Registration[]): Finding[] {
  return unknownCrds(registrations).map(({ name, message }) => ({
    level: 'error',
    rule: 'conversion-crd-unknown',
    subject: name,
    message,
  }));
}

/**
 * Lints manifest files. A file that cannot be read as Kubernetes objects (not YAML or JSON, empty,
 * no apiVersion/kind) is an `unreadable` error naming it: lint never passes what it cannot read.
 */
export function lintFiles(files: string[], kubeVersion?: CelKubeVersion): Finding[] {
  const findings: Finding[] = [];
  for (const file of files) {
    try {
      findings.push(...lintDocuments(readDocuments(file), kubeVersion));
    } catch (err) {
      if (!(err instanceof KlwError)) throw err;
      findings.push({
        level: 'error',
        rule: 'unreadable',
        subject: file,
        message: err.message.startsWith(`${file}: `) ? err.message.slice(file.length + 2) : err.message,
      });
    }
  }
  return findings;
}

/** `error timeout-range pod-policy.example.com: ...` */
export function formatFinding(f: Finding): string {
  return `${f.level} ${f.rule} ${f.subject}: ${f.message}`;
}
