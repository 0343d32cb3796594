import { randomBytes } from 'node:crypto';
import type { Operation as PatchOperation } from 'fast-json-patch';
import type { AdmissionWebhook } from '../../lib/admission/webhook.ts';
import {
  selectorMatches,
  type AdmissionRegistration,
  type Enforcement,
  type LabelSelector,
  type RuleWithOperations,
} from '../../lib/registration.ts';
import { enforcementEnvFor, ENFORCEMENT_ENV } from '../../lib/admission/enforcement.ts';
import type { AdmissionReview, KubeObject } from '../../lib/review/schemas.ts';
import { invoke, type InvokeOptions } from '../../lib/harness/invoke.ts';
import type { WebhookHandler } from '../../lib/webhook.ts';
import { admissionReview } from '../../lib/harness/reviews.ts';
import type { AuthorizationAttributes, AuthorizationDecision, Authorize } from '../../lib/matchconditions/cel.ts';
import { answerWithoutCalling, matchConditionsFor } from '../../lib/matchconditions/matcher.ts';
import { accessReview, KubeApiError, type KubeClient } from './kubeapi.ts';
import { toKubeYaml } from '../output.ts';

/** The user the reviews name: the auditor. */
export type UserInfo = AdmissionReview['request']['userInfo'];

/** What one object would get from one webhook. */
export type AuditOutcome = 'denied' | 'warned' | 'patched' | 'allowed' | 'skipped' | 'error';

/** One object run through one webhook. */
export interface AuditResult {
  function: string;
  webhook: string;
  operation: 'UPDATE' | 'CREATE';
  apiVersion: string;
  kind: string;
  /** `<plural>` or `<plural>.<group>`. */
  resource: string;
  namespace?: string;
  name: string;
  result: AuditOutcome;
  /**
   * The webhook's enforcement as registered (`Deny` unless set). The audit always runs the
   * function as `Deny`, so under `Warn` or `Audit` a `denied` result is what the policy would
   * deny once enforced; today the API server admits it (with a warning, or an audit annotation).
   */
  enforcement: Enforcement;
  /** True when the API server would refuse the request: a denial, or an error under failurePolicy Fail. */
  rejected: boolean;
  message?: string;
  warnings?: string[];
  patch?: PatchOperation[];
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
  onProgress?: (progress: AuditProgress) => void;
}

/** Objects per list request unless told otherwise (kubectl's default --chunk-size). */
export const DEFAULT_PAGE_SIZE = 500;

type Json = Record<string, any>;

/** A listable resource from discovery. */
interface ApiResource {
  group: string;
  version: string;
  name: string;
  kind: string;
  namespaced: boolean;
}

/** A resource one webhook's rules send reviews for, and the operation the audit sends. */
interface Target {
  resource: ApiResource;
  operation: 'UPDATE' | 'CREATE';
}

/** Discovery, fetched lazily and once per audit. */
class Discovery {
  private groups?: Array<{ name: string; versions: string[] }>;
  private readonly resources = new Map<string, Promise<ApiResource[]>>();

  constructor(
    private readonly client: KubeClient,
    private readonly problems: string[],
  ) {}

  /** Every API group with its versions, the preferred version first; the core group is "". */
  async allGroups(): Promise<Array<{ name: string; versions: string[] }>> {
    if (!this.groups) {
      const core = (await this.client.request('GET', '/api')) as Json;
      const list = (await this.client.request('GET', '/apis')) as Json;
      this.groups = [{ name: '', versions: Array.isArray(core.versions) ? core.versions : ['v1'] }];
      for (const g of Array.isArray(list.groups) ? list.groups : []) {
        const versions: string[] = (g.versions ?? []).map((v: Json) => String(v.version));
        const preferred = g.preferredVersion?.version;
        if (preferred && versions.includes(preferred))
          versions.sort((a, b) => Number(b === preferred) - Number(a === preferred));
        this.groups.push({ name: String(g.name), versions });
      }
    }
    return this.groups;
  }

  /** The listable (non-subresource) resources of one group version. */
  resourcesOf(group: string, version: string): Promise<ApiResource[]> {
    const key = `${group}/${version}`;
    let found = this.resources.get(key);
    if (!found) {
      found = this.client.request('GET', group ? `/apis/${group}/${version}` : `/api/${version}`).then(
        (list: Json) =>
          (Array.isArray(list.resources) ? list.resources : [])
            .filter(
              (r: Json) =>
                typeof r.name === 'string' &&
                !r.name.includes('/') &&
                Array.isArray(r.verbs) &&
                r.verbs.includes('list'),
            )
            .map((r: Json) => ({
              group,
              version,
              name: r.name,
              kind: String(r.kind),
              namespaced: r.namespaced === true,
            })),
        (err: unknown) => {
          // As kubectl does, a group version that cannot be discovered (an aggregated API that is down) is reported and skipped.
          if (!(err instanceof KubeApiError)) throw err;
          this.problems.push(`discovery of ${key || 'v1'}: ${err.message}`);
          return [];
        },
      );
      this.resources.set(key, found);
    }
    return found;
  }
}

const anyOf = (list: string[], value: string) => list.includes('*') || list.includes(value);

/** The audit's operation for a rule: UPDATE when the rule covers updates, CREATE when it only covers creation, none otherwise. */
function operationFor(rule: RuleWithOperations): Target['operation'] | undefined {
  if (anyOf(rule.operations, 'UPDATE')) return 'UPDATE';
  if (rule.operations.includes('CREATE')) return 'CREATE';
  return undefined;
}

/**
 * The resources a webhook's rules match, from discovery: each group and resource once, in the
 * first version the rules match (the preferred one when they match it), with UPDATE when any
 * matching rule covers updates. Subresource rules are not audited (no objects to list).
 */
async function targetsOf(reg: AdmissionRegistration, discovery: Discovery): Promise<Target[]> {
  const targets = new Map<string, Target>();
  for (const rule of reg.rules) {
    const operation = operationFor(rule);
    if (!operation) continue;
    for (const group of await discovery.allGroups()) {
      if (!anyOf(rule.apiGroups, group.name)) continue;
      for (const version of group.versions) {
        if (!anyOf(rule.apiVersions, version)) continue;
        for (const resource of await discovery.resourcesOf(group.name, version)) {
          const named =
            rule.resources.includes('*') || rule.resources.includes('*/*') || rule.resources.includes(resource.name);
          const scope = rule.scope ?? '*';
          const scoped = scope === '*' || (scope === 'Namespaced') === resource.namespaced;
          if (!named || !scoped) continue;
          const key = `${group.name}/${resource.name}`;
          const existing = targets.get(key);
          if (!existing) targets.set(key, { resource, operation });
          else if (operation === 'UPDATE') existing.operation = 'UPDATE';
        }
      }
    }
  }
  return [...targets.values()];
}

/** A label selector as a `labelSelector` query string, so the API server filters before paging. */
export function selectorQuery(selector: LabelSelector | undefined): string {
  const parts: string[] = [];
  for (const [key, value] of Object.entries(selector?.matchLabels ?? {})) parts.push(`${key}=${value}`);
  for (const { key, operator, values = [] } of selector?.matchExpressions ?? []) {
    if (operator === 'In') parts.push(`${key} in (${values.join(',')})`);
    else if (operator === 'NotIn') parts.push(`${key} notin (${values.join(',')})`);
    else if (operator === 'Exists') parts.push(key);
    else parts.push(`!${key}`);
  }
  return parts.join(',');
}

function collectionPath(resource: ApiResource): string {
  return resource.group
    ? `/apis/${resource.group}/${resource.version}/${resource.name}`
    : `/api/${resource.version}/${resource.name}`;
}

function emptySummary(): Record<AuditOutcome, number> {
  return { denied: 0, warned: 0, patched: 0, allowed: 0, skipped: 0, error: 0 };
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
  const report: AuditReport = { auditor, summary: emptySummary(), results: [], problems: [] };
  const discovery = new Discovery(client, report.problems);
  const reviews = new AccessReviews(client, auditor, options.accessReviews ?? 'self', report.problems);
  let namespaceLabels: Promise<Map<string, Record<string, string>>> | undefined;
  const labelsOfNamespace = async (name: string) => {
    namespaceLabels ??= (async () => {
      const labels = new Map<string, Record<string, string>>();
      await client.list('/api/v1/namespaces', {}, pageSize, (items) => {
        for (const ns of items) labels.set(ns.metadata?.name, ns.metadata?.labels ?? {});
      });
      return labels;
    })();
    return (await namespaceLabels).get(name) ?? {};
  };

  for (const webhook of options.webhooks) {
    const reg = webhook.registration;
    const caller = localCaller(webhook);
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
              const result = await auditObject(caller, resource, object, operation, auditor, reviews);
              report.summary[result.result]++;
              if (result.result !== 'allowed' && result.result !== 'skipped') report.results.push(result);
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

/** The selectors as the API server applies them; namespaceSelector uses the namespace's labels (a Namespace's own). */
async function selected(
  reg: AdmissionRegistration,
  resource: ApiResource,
  object: KubeObject,
  labelsOfNamespace: (name: string) => Promise<Record<string, string>>,
): Promise<boolean> {
  const metadata = (object.metadata ?? {}) as Json;
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
      return (event, context) =>
        inner({ ...(event as Json), pathParameters: { ...(event as Json).pathParameters, secret } }, context);
    },
  };
  return { webhook: local, options: { headers: { authorization: `Bearer ${secret}` }, handlerOptions: { env } } };
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
  const metadata = (object.metadata ?? {}) as Json;
  const result: AuditResult = {
    function: reg.name,
    webhook: reg.webhookName,
    operation,
    apiVersion: resource.group ? `${resource.group}/${resource.version}` : resource.version,
    kind: resource.kind,
    resource: resource.group ? `${resource.name}.${resource.group}` : resource.name,
    ...(metadata.namespace ? { namespace: String(metadata.namespace) } : {}),
    name: String(metadata.name ?? ''),
    result: 'allowed',
    enforcement: reg.enforcement ?? 'Deny',
    rejected: false,
  };
  const review = admissionReview(object, {
    operation,
    ...(operation === 'UPDATE' ? { oldObject: object } : {}),
    userInfo: auditor,
    resource: resource.name,
    // The API server sends the first review version it knows from the webhook's list.
    version: reg.admissionReviewVersions.includes('v1') ? 'v1' : 'v1beta1',
  });
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
    result.message = `${(err as Error).message.split('\n')[0]} (failurePolicy ${reg.failurePolicy})`;
  }
  return result;
}

/** Rounds of asking per object: a check may only be reached once another's answer is known (`a && b`). */
const MAX_AUTHORIZER_ROUNDS = 8;

/**
 * The cluster's answers to matchConditions' `authorizer` checks, asked with access reviews and
 * kept for the run by user and attributes. The API server asks its authorizer for the
 * requesting user; in an audit that user is the auditor.
 */
class AccessReviews {
  private readonly answers = new Map<string, AuthorizationDecision | Error>();
  private readonly asking = new Map<string, Promise<void>>();
  private readonly reported = new Set<string>();

  constructor(
    private readonly client: KubeClient,
    private readonly auditor: UserInfo,
    private readonly mode: 'self' | 'subject',
    private readonly problems: string[],
  ) {}

  private static key(a: AuthorizationAttributes): string {
    const { username, uid, groups, extra } = a.user;
    return JSON.stringify([
      username,
      uid ?? '',
      groups ?? [],
      extra ?? {},
      a.verb,
      a.path ?? null,
      a.group ?? '',
      a.resource ?? '',
      a.subresource ?? '',
      a.namespace ?? '',
      a.name ?? '',
    ]);
  }

  /** The answer already known: a decision, the error asking failed with, or undefined. */
  known(attributes: AuthorizationAttributes): AuthorizationDecision | Error | undefined {
    return this.answers.get(AccessReviews.key(attributes));
  }

  /** Asks the cluster once per run; a failure is kept as the answer (the check errors) and reported. */
  ask(attributes: AuthorizationAttributes): Promise<void> {
    const key = AccessReviews.key(attributes);
    let asking = this.asking.get(key);
    if (!asking) {
      const self = this.mode === 'self' && attributes.user.username === this.auditor.username;
      asking = accessReview(this.client, attributes, self).then(
        (decision) => void this.answers.set(key, decision),
        (err: unknown) => {
          const error = err instanceof Error ? err : new Error(String(err));
          this.answers.set(key, error);
          // One problem per user and failure, naming the first check it hit: the conditions were not evaluated as the API server would.
          const reported = `${attributes.user.username}\0${error.message}`;
          if (!this.reported.has(reported)) {
            this.reported.add(reported);
            this.problems.push(
              `authorizer check ${describeCheck(attributes)} for ${attributes.user.username}: ${error.message}`,
            );
          }
        },
      );
      this.asking.set(key, asking);
    }
    return asking;
  }

  /**
   * Asks every check the registration's conditions make for this request, round after round
   * (evaluating with what is known, asking what was reached and is not), and returns the
   * authorizer answering from those answers for the evaluation that counts.
   */
  async settle(reg: AdmissionRegistration, request: AdmissionReview['request']): Promise<Authorize> {
    for (let round = 0; round < MAX_AUTHORIZER_ROUNDS; round++) {
      const missing: AuthorizationAttributes[] = [];
      answerWithoutCalling(reg, request, (attributes) => {
        const answer = this.known(attributes);
        if (answer === undefined) {
          missing.push(attributes);
          return { decision: 'NoOpinion' };
        }
        if (answer instanceof Error) throw answer;
        return answer;
      });
      if (!missing.length) break;
      await Promise.all(missing.map((attributes) => this.ask(attributes)));
    }
    return (attributes) => {
      const answer = this.known(attributes);
      if (answer instanceof Error) throw answer;
      if (answer === undefined)
        throw new Error(
          `authorizer check ${describeCheck(attributes)} not asked: more than ${MAX_AUTHORIZER_ROUNDS} rounds of dependent checks`,
        );
      return answer;
    };
  }
}

/** `use exemptions.example.com in namespace shop`, `get /healthz`. */
function describeCheck(a: AuthorizationAttributes): string {
  if (a.path !== undefined) return `${a.verb} ${a.path}`;
  const resource = `${a.resource ?? ''}${a.subresource ? `/${a.subresource}` : ''}${a.group ? `.${a.group}` : ''}`;
  return `${a.verb} ${resource}${a.name ? ` ${a.name}` : ''}${a.namespace ? ` in namespace ${a.namespace}` : ''}`;
}

/** One line per patch operation: `add /metadata/labels/team`. */
function describePatch(patch: PatchOperation[]): string {
  return patch.map((op) => `${op.op} ${op.path}`).join(', ');
}

/** The report as a table (non-allowed objects), JSON or YAML. */
export function renderAudit(report: AuditReport, format: 'table' | 'json' | 'yaml'): string {
  if (format === 'json') return `${JSON.stringify(report, null, 2)}\n`;
  if (format === 'yaml') return toKubeYaml(report);
  if (!report.results.length) return '';
  const rows = [
    ['RESULT', 'FUNCTION', 'ENFORCEMENT', 'RESOURCE', 'OBJECT', 'MESSAGE'],
    ...report.results.map((r) => [
      r.result.toUpperCase(),
      r.function,
      r.enforcement,
      r.resource,
      r.namespace ? `${r.namespace}/${r.name}` : r.name,
      [
        r.message,
        r.warnings?.length ? `warnings: ${r.warnings.join(' | ')}` : undefined,
        r.patch ? `patch: ${describePatch(r.patch)}` : undefined,
      ]
        .filter(Boolean)
        .join('; '),
    ]),
  ];
  const widths = rows[0]!.slice(0, -1).map((_, i) => Math.max(...rows.map((row) => row[i]!.length)));
  return `${rows
    .map((row) =>
      row
        .map((cell, i) => (i < widths.length ? cell.padEnd(widths[i]!) : cell))
        .join('  ')
        .trimEnd(),
    )
    .join('\n')}\n`;
}

/** `audit: 12 objects: 2 denied, 1 warned, 1 patched, 8 allowed, 0 skipped, 0 errors`. */
export function summaryLine(report: AuditReport): string {
  const s = report.summary;
  const total = Object.values(s).reduce((a, b) => a + b, 0);
  return `audit: ${total} object${total === 1 ? '' : 's'}: ${s.denied} denied, ${s.warned} warned, ${s.patched} patched, ${s.allowed} allowed, ${s.skipped} skipped, ${s.error} error${s.error === 1 ? '' : 's'}`;
}

/**
 * `3 objects would be denied (2 by functions in Warn or Audit enforcement, admitted until it is
 * Deny)`; undefined when nothing would be.
 */
export function deniedLine(report: AuditReport): string | undefined {
  const rejected = report.results.filter((r) => r.rejected).length;
  if (!rejected) return undefined;
  // Denials of functions in Warn or Audit enforcement: the API server admits these objects until the mode is Deny.
  const lenient = report.results.filter((r) => r.result === 'denied' && r.enforcement !== 'Deny').length;
  return `${rejected} object${rejected === 1 ? '' : 's'} would be denied${lenient ? ` (${lenient} by functions in Warn or Audit enforcement, admitted until it is Deny)` : ''}`;
}

/** A one-line progress bar redrawn in place; draws nothing unless the stream is a terminal. */
export class ProgressBar {
  private last = '';
  private key = '';
  private drawnAt = 0;
  /** Bar width in characters. */
  static readonly WIDTH = 24;
  /** Objects between redraws when the total is unknown. */
  static readonly STEP = 25;

  constructor(private readonly stream: { isTTY?: boolean; write(text: string): unknown }) {}

  update(p: AuditProgress): void {
    if (!this.stream.isTTY) return;
    // Redraw about 200 times per resource at most, and whenever the resource changes or completes.
    const key = `${p.function}\0${p.resource}`;
    const step = p.total ? Math.max(1, Math.floor(p.total / 200)) : ProgressBar.STEP;
    if (key === this.key && p.done !== p.total && p.done - this.drawnAt < step) return;
    this.key = key;
    this.drawnAt = p.done;
    let line: string;
    if (p.total) {
      const filled = Math.round((ProgressBar.WIDTH * Math.min(p.done, p.total)) / p.total);
      line = `[${'#'.repeat(filled)}${'.'.repeat(ProgressBar.WIDTH - filled)}] ${p.done}/${p.total} ${p.resource} (${p.function})`;
    } else line = `[${'?'.repeat(ProgressBar.WIDTH)}] ${p.done} ${p.resource} (${p.function})`;
    if (line === this.last) return;
    this.last = line;
    this.stream.write(`\r\x1b[2K${line}`);
  }

  /** Clears the bar. */
  done(): void {
    if (this.stream.isTTY && this.last) this.stream.write('\r\x1b[2K');
    this.last = '';
  }
}
