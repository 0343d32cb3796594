import { randomBytes } from 'node:crypto';
import type { AdmissionWebhook } from '../../lib/admission/webhook.ts';
import {
  selectorMatches,
  type AdmissionRegistration,
  type Enforcement,
  type KubeObject,
  enforcementEnvFor,
  ENFORCEMENT_ENV,
  type WebhookHandler,
} from '../../lib/internal.ts';
import { invoke, type InvokeOptions } from '../../lib/harness/invoke.ts';
import { admissionReview } from '../../lib/harness/reviews.ts';
import { matchConditionsFor } from '../../lib/matchconditions/matcher.ts';
import { KubeApiError, type KubeClient } from './kubeapi.ts';
import { type ApiResource, type Target, Discovery, targetsOf, selectorQuery, collectionPath } from './discovery.ts';
import { AccessReviews, type UserInfo } from './access.ts';
import {
  auditMutatingPolicy,
  auditValidatingPolicy,
  ClusterObjects,
  isMutatingPolicy,
  isValidatingPolicy,
  type PolicyAuditContext,
  type PolicyVerdict,
} from './policies.ts';

export type { UserInfo } from './access.ts';

/**
 * What one object would get from one webhook or policy; `audited`: a validating policy whose
 * actions in the cluster only audit (the API server admits the object and records the failure).
 */
export type AuditOutcome = 'denied' | 'warned' | 'audited' | 'patched' | 'allowed' | 'skipped' | 'error';

/** One object run through one webhook: what it got (the fields a policy's verdict has) and where. */
export interface AuditResult extends Omit<PolicyVerdict, 'result' | 'enforcement'> {
  function: string;
  webhook: string;
  operation: 'UPDATE' | 'CREATE';
  apiVersion: string;
  kind: string;
  /** `<plural>` or `<plural>.<group>`. */
  resource: string;
  namespace?: string;
  name: string;
  /** The object's uid, when it has one. */
  uid?: string;
  result: AuditOutcome;
  /**
   * The webhook's enforcement as registered (`Deny` unless set). The audit always runs the
   * function as `Deny`, so under `Warn` or `Audit` a `denied` result is what the policy would
   * deny once enforced; today the API server admits it (with a warning, or an audit annotation).
   */
  enforcement: Enforcement;
}

/** Everything `klw audit` found. */
export interface AuditReport {
  auditor: UserInfo;
  /** Objects run through a webhook, by outcome. */
  summary: Record<AuditOutcome, number>;
  /** Every object that was denied, warned, patched or failed (allowed and skipped ones are only counted). */
  results: AuditResult[];
  /** Resources that could not be discovered or listed (aggregated APIs that are down, no permission). */
  problems: string[];
  /** What was read elsewhere than the cluster (policy params the auditor may not list). */
  notes?: string[];
}

/** Progress of an audit, for a progress bar. */
export interface AuditProgress {
  function: string;
  resource: string;
  /** Objects of this resource done so far. */
  done: number;
  /** Objects of this resource in all, when the API server says (remainingItemCount). */
  total?: number;
}

/** Options of {@link runAudit}. */
export interface AuditOptions {
  client: KubeClient;
  webhooks: AdmissionWebhook[];
  auditor: UserInfo;
  /** Objects per list page (`limit`); default 500, kubectl's chunk size. */
  pageSize?: number;
  /**
   * How `authorizer` checks in matchConditions are asked of the cluster for the auditor:
   * `self` (default) by SelfSubjectAccessReview, the auditor being the connection's own user;
   * `subject` by SubjectAccessReview naming the auditor (the auditor was given, as with `--as`).
   * Checks for another user (`authorizer.serviceAccount(...)`) always use SubjectAccessReview.
   */
  accessReviews?: 'self' | 'subject';
  /** The cluster's enforcement by function name (clusters.yaml): a policy's validationActions in this cluster. */
  enforcement?: Record<string, Enforcement>;
  /** Keep allowed results in the report too (reports that count passes). */
  keepAllowed?: boolean;
  onProgress?: (progress: AuditProgress) => void;
}

/** Objects per list request unless told otherwise (kubectl's default --chunk-size). */
export const DEFAULT_PAGE_SIZE = 500;

function emptySummary(): Record<AuditOutcome, number> {
  return { denied: 0, warned: 0, audited: 0, patched: 0, allowed: 0, skipped: 0, error: 0 };
}

/**
 * Lists the existing objects each admission webhook's rules, namespaceSelector, objectSelector and
 * matchConditions match, and runs each through the function locally as the API server would
 * send it: an UPDATE of the object onto itself (oldObject = object; a CREATE for webhooks that
 * only see creation), the auditor as the user.
 */
export async function runAudit(options: AuditOptions): Promise<AuditReport> {
  const { client, auditor } = options;
  const pageSize = options.pageSize ?? DEFAULT_PAGE_SIZE;
  const notes: string[] = [];
  const report: AuditReport = { auditor, summary: emptySummary(), results: [], problems: [], notes };
  const discovery = new Discovery(client, report.problems);
  const reviews = new AccessReviews(client, auditor, options.accessReviews ?? 'self', report.problems);
  const cluster = new ClusterObjects(client, discovery, pageSize, notes);
  const labelsOfNamespace = async (name: string) =>
    ((await cluster.namespace(name))?.metadata?.labels ?? {}) as Record<string, string>;

  for (const webhook of options.webhooks) {
    const reg = webhook.registration;
    const enforcement = options.enforcement?.[reg.name];
    const check = checkerOf(webhook, auditor, reviews, { cluster, reviews, ...(enforcement ? { enforcement } : {}) });
    for (const { resource, operation } of await targetsOf(reg, discovery)) {
      const plural = resource.group ? `${resource.name}.${resource.group}` : resource.name;
      const apiVersion = resource.group ? `${resource.group}/${resource.version}` : resource.version;
      let done = 0;
      let total: number | undefined;
      // Objects audited so far, by uid: a list restarted after an expired continue token sends them again.
      const seen = new Set<string>();
      const query: Record<string, string> = {};
      const labelSelector = selectorQuery(reg.objectSelector);
      if (labelSelector) query.labelSelector = labelSelector;
      try {
        await client.list(collectionPath(resource), query, pageSize, async (items, remaining, restarted) => {
          // Only pages with more to come say how many remain; the total stays known on the last page.
          if (restarted) total = undefined;
          else if (remaining !== undefined) total = done + items.length + remaining;
          for (const item of items) {
            const id = item.metadata?.uid
              ? String(item.metadata.uid)
              : `${item.metadata?.namespace ?? ''}/${item.metadata?.name ?? ''}`;
            if (seen.has(id)) continue;
            seen.add(id);
            const object = { ...item, apiVersion, kind: resource.kind } as KubeObject;
            done++;
            if (await selected(reg, resource, object, labelsOfNamespace)) {
              const result = await check(resource, object, operation);
              report.summary[result.result]++;
              if (options.keepAllowed || (result.result !== 'allowed' && result.result !== 'skipped'))
                report.results.push(result);
            }
            options.onProgress?.({
              function: reg.name,
              resource: plural,
              done,
              ...(total === undefined ? {} : { total }),
            });
          }
        });
      } catch (err) {
        if (!(err instanceof KubeApiError)) throw err;
        report.problems.push(`${reg.name}: cannot list ${plural}: ${err.message}`);
      }
    }
  }
  return report;
}

/** Runs one object through a webhook (the function, called locally) or a policy (evaluated as the API server does). */
type Checker = (resource: ApiResource, object: KubeObject, operation: Target['operation']) => Promise<AuditResult>;

function checkerOf(
  webhook: AdmissionWebhook,
  auditor: UserInfo,
  reviews: AccessReviews,
  context: PolicyAuditContext,
): Checker {
  if (isValidatingPolicy(webhook) || isMutatingPolicy(webhook))
    return async (resource, object, operation) => {
      const result = baseResult(webhook.registration, resource, object, operation);
      const { request } = reviewOf(webhook.registration, resource, object, operation, auditor);
      const verdict: PolicyVerdict = isValidatingPolicy(webhook)
        ? await auditValidatingPolicy(webhook, request, context)
        : await auditMutatingPolicy(webhook, request, context);
      return { ...result, ...verdict, enforcement: verdict.enforcement ?? context.enforcement ?? result.enforcement };
    };
  const caller = localCaller(webhook);
  return (resource, object, operation) => auditObject(caller, resource, object, operation, auditor, reviews);
}

/** The selectors as the API server applies them; namespaceSelector uses the namespace's labels (a Namespace's own). */
async function selected(
  reg: AdmissionRegistration,
  resource: ApiResource,
  object: KubeObject,
  labelsOfNamespace: (name: string) => Promise<Record<string, string>>,
): Promise<boolean> {
  const metadata: NonNullable<KubeObject['metadata']> = object.metadata ?? {};
  if (!selectorMatches(reg.objectSelector, metadata.labels ?? {})) return false;
  if (!reg.namespaceSelector || (!reg.namespaceSelector.matchLabels && !reg.namespaceSelector.matchExpressions?.length))
    return true;
  if (resource.group === '' && resource.name === 'namespaces')
    return selectorMatches(reg.namespaceSelector, metadata.labels ?? {});
  // Cluster-scoped objects other than namespaces are never exempted by a namespaceSelector.
  if (!resource.namespaced) return true;
  return selectorMatches(reg.namespaceSelector, await labelsOfNamespace(String(metadata.namespace ?? '')));
}

/** A function and the invoke options that call it in-process, standing in for the API server. */
interface LocalCaller {
  webhook: AdmissionWebhook;
  options: InvokeOptions;
}

// Caller authentication settings the function would read from the environment.
const AUTH_ENV = /^KLW_(BEARER_TOKEN|PATH_SECRET)/;
// Enforcement overrides (KLW_ENFORCEMENT, KLW_ENFORCEMENT_<NAME>): the auditor's shell does not choose the function's mode.
const ENFORCEMENT_VARIABLES = new RegExp(`^${ENFORCEMENT_ENV}`);

/**
 * Caller authentication guards the function's URL, not its logic: the audit calls the function
 * in-process with a one-off bearer token and path secret of its own (in the environment the
 * handler reads, not process.env), so whatever the registration's `auth` mode and whatever the
 * auditor's shell holds (KLW_BEARER_TOKEN, say), the function answers the review. The
 * function runs with its enforcement forced to `Deny` (`KLW_ENFORCEMENT_<NAME>`, whatever the
 * registration or the auditor's environment says), so a `Warn` or `Audit` policy reports what
 * it would deny instead of admitting it.
 */
function localCaller(webhook: AdmissionWebhook): LocalCaller {
  const secret = randomBytes(16).toString('hex');
  const env: NodeJS.ProcessEnv = {};
  for (const [name, value] of Object.entries(process.env)) {
    if (!AUTH_ENV.test(name) && !ENFORCEMENT_VARIABLES.test(name) && name !== 'AWS_LAMBDA_FUNCTION_NAME')
      env[name] = value;
  }
  env[enforcementEnvFor(webhook.registration.name)] = 'Deny';
  env.KLW_BEARER_TOKEN = secret;
  env.KLW_PATH_SECRET = secret;
  let handler: WebhookHandler | undefined;
  const local: AdmissionWebhook = {
    ...webhook,
    withOptions: (handlerOptions) => {
      const inner = (handler ??= webhook.withOptions(handlerOptions));
      return (event, context) => {
        // The gateway event the test kit made: an object, whose path parameters get the secret.
        const made = event as { pathParameters?: Record<string, unknown> };
        return inner({ ...made, pathParameters: { ...made.pathParameters, secret } }, context);
      };
    },
  };
  return { webhook: local, options: { headers: { authorization: `Bearer ${secret}` }, handlerOptions: { env } } };
}

/** A result naming the object and the function, allowed until the check says otherwise. */
function baseResult(
  reg: AdmissionRegistration,
  resource: ApiResource,
  object: KubeObject,
  operation: Target['operation'],
): AuditResult {
  const metadata: NonNullable<KubeObject['metadata']> = object.metadata ?? {};
  return {
    function: reg.name,
    webhook: reg.webhookName,
    operation,
    apiVersion: resource.group ? `${resource.group}/${resource.version}` : resource.version,
    kind: resource.kind,
    resource: resource.group ? `${resource.name}.${resource.group}` : resource.name,
    ...(metadata.namespace ? { namespace: String(metadata.namespace) } : {}),
    name: String(metadata.name ?? ''),
    ...(metadata.uid ? { uid: String(metadata.uid) } : {}),
    result: 'allowed',
    enforcement: reg.enforcement ?? 'Deny',
    rejected: false,
  };
}

/** The review the API server would send for the object: an update onto itself (or a create), by the auditor. */
function reviewOf(
  reg: AdmissionRegistration,
  resource: ApiResource,
  object: KubeObject,
  operation: Target['operation'],
  auditor: UserInfo,
) {
  return admissionReview(object, {
    operation,
    ...(operation === 'UPDATE' ? { oldObject: object } : {}),
    userInfo: auditor,
    resource: resource.name,
    // The API server sends the first review version it knows from the webhook's list.
    version: reg.admissionReviewVersions.includes('v1') ? 'v1' : 'v1beta1',
  });
}

async function auditObject(
  caller: LocalCaller,
  resource: ApiResource,
  object: KubeObject,
  operation: Target['operation'],
  auditor: UserInfo,
  reviews: AccessReviews,
): Promise<AuditResult> {
  const webhook = caller.webhook;
  const reg = webhook.registration;
  const result = baseResult(reg, resource, object, operation);
  const review = reviewOf(reg, resource, object, operation, auditor);
  try {
    const authorize = matchConditionsFor(reg).usesAuthorizer ? await reviews.settle(reg, review.request) : undefined;
    const answer = await invoke(webhook, review, authorize ? { ...caller.options, authorize } : caller.options);
    if (answer.matchConditionError) {
      result.result = 'error';
      result.rejected = !answer.allowed;
      result.message = answer.status?.message ?? answer.matchConditionError;
    } else if (answer.skipped) {
      result.result = 'skipped';
      result.message = answer.skipped;
    } else if (!answer.allowed) {
      result.result = 'denied';
      result.rejected = true;
      result.message = answer.status?.message ?? 'denied without a message';
    } else if (answer.patch.length) result.result = 'patched';
    else if (answer.warnings.length) result.result = 'warned';
    if (answer.warnings.length) result.warnings = answer.warnings;
    if (answer.patch.length) result.patch = answer.patch;
  } catch (err) {
    // The function failed (threw, timed out, answered what the API server refuses): failurePolicy decides.
    result.result = 'error';
    result.rejected = reg.failurePolicy === 'Fail';
    // A failure's message names the review on its first line and the error on its second.
    const message = (err as Error).message.split('\n').slice(0, 2).join(' ').replace(/\s+/g, ' ');
    result.message = `${message} (failurePolicy ${reg.failurePolicy})`;
  }
  return result;
}
