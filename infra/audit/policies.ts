/**
 * Admission policies in an audit. A validating policy is evaluated as the API server evaluates
 * it natively (its constraints with the namespace's labels, matchConditions, validations, the
 * binding's validationActions in effect for the cluster), a mutating policy as its dispatcher
 * mutates: what it would change is the patch. Params come from the cluster (the paramRef's
 * ConfigMap or custom resource) where the auditor may read them, else from the definition.
 */
import type { Operation as PatchOperation } from 'fast-json-patch';
import type { AdmissionWebhook } from '../../lib/admission/webhook.ts';
import {
  type AdmissionRequest,
  builtinEquivalents,
  type CompiledValidatingPolicy,
  compileValidatingPolicy,
  defaultObject,
  diffPatch,
  dispatchValidating,
  type Enforcement,
  type KubeObject,
  type MutatingPolicyWebhook,
  type ParamKind,
  type ParamSource,
  paramSourcesOf,
  type PoliciesVerdict,
  type PolicyAuthorize as Authorize,
  VALIDATION_FAILURE_ANNOTATION,
  type ValidatingPolicyWebhook,
  type ValidationAction,
} from '../../lib/internal.ts';
import type { AccessReviews } from './access.ts';
import { collectionPath, type Discovery } from './discovery.ts';
import { KubeApiError, type KubeClient } from './kubeapi.ts';

/** True for a webhook defined by defineValidatingPolicy. */
export const isValidatingPolicy = (w: AdmissionWebhook): w is ValidatingPolicyWebhook => 'validatingPolicy' in w;
/** True for a webhook defined by defineMutatingPolicy. */
export const isMutatingPolicy = (w: AdmissionWebhook): w is MutatingPolicyWebhook => 'mutatingPolicy' in w;

/** What one object gets from one policy, in the terms of an audit result. */
export interface PolicyVerdict {
  result: 'denied' | 'warned' | 'audited' | 'patched' | 'allowed' | 'error';
  /** True when the API server would refuse the request: a denial, or an error under failurePolicy Fail. */
  rejected: boolean;
  message?: string;
  warnings?: string[];
  patch?: PatchOperation[];
  /** A validating policy's actions on a failed validation in this cluster (its enforcement, else the binding's). */
  validationActions?: ValidationAction[];
  /** The audit annotations the API server would record for a validating policy. */
  auditAnnotations?: Record<string, string>;
  /** The mode the actions amount to: `Deny` when they deny, else `Warn` when they warn, else `Audit`. */
  enforcement?: Enforcement;
}

/**
 * What the audit reads of the cluster for policies, once per run: Namespace objects (the
 * policies' `namespaceObject` and namespaceSelector) and the objects of each paramKind.
 */
export class ClusterObjects {
  private namespaces?: Promise<Map<string, KubeObject>>;
  private readonly params = new Map<string, Promise<ParamSource | undefined>>();

  constructor(
    private readonly client: KubeClient,
    private readonly discovery: Discovery,
    private readonly pageSize: number,
    /** Where the audit notes what it could not read and read elsewhere. */
    private readonly notes: string[],
  ) {}

  /** The Namespace of that name, undefined when there is none. */
  async namespace(name: string): Promise<KubeObject | undefined> {
    this.namespaces ??= (async () => {
      const found = new Map<string, KubeObject>();
      await this.client.list('/api/v1/namespaces', {}, this.pageSize, (items) => {
        for (const ns of items) found.set(ns.metadata?.name as string, { ...ns, apiVersion: 'v1', kind: 'Namespace' });
      });
      return found;
    })();
    return (await this.namespaces).get(name);
  }

  /**
   * The objects of a paramKind in the cluster; where the cluster does not serve the kind or the
   * auditor may not list it, the definition's `fallback` objects (undefined: none), with a note.
   */
  paramSource(
    kind: ParamKind,
    fallback: readonly KubeObject[] | undefined,
    policy: string,
  ): Promise<ParamSource | undefined> {
    const key = `${kind.apiVersion}\0${kind.kind}`;
    let found = this.params.get(key);
    if (!found) {
      found = this.readParams(kind).then((read) => {
        if (typeof read !== 'string') return read;
        this.notes.push(
          `policy ${policy}: params of ${kind.kind} (${kind.apiVersion}) ${read}; ` +
            `${fallback ? "evaluated with the definition's params" : 'evaluated without params'}`,
        );
        return fallback ? paramSourcesOf(fallback)(kind) : undefined;
      });
      this.params.set(key, found);
    }
    return found;
  }

  /** The cluster's objects of a kind, or why they could not be read. */
  private async readParams(kind: ParamKind): Promise<ParamSource | string> {
    const slash = kind.apiVersion.indexOf('/');
    const group = slash < 0 ? '' : kind.apiVersion.slice(0, slash);
    const version = kind.apiVersion.slice(slash + 1);
    const resource = (await this.discovery.resourcesOf(group, version)).find((r) => r.kind === kind.kind);
    if (!resource) return 'are not served by the cluster';
    const items: KubeObject[] = [];
    try {
      await this.client.list(collectionPath(resource), {}, this.pageSize, (page) => {
        for (const item of page) items.push({ ...item, apiVersion: kind.apiVersion, kind: kind.kind });
      });
    } catch (err) {
      if (!(err instanceof KubeApiError)) throw err;
      return `could not be listed (${err.message})`;
    }
    return {
      namespaced: resource.namespaced,
      list: (ns) => items.filter((o) => !resource.namespaced || (o.metadata?.namespace ?? '') === ns),
    };
  }
}

/** What evaluating a policy needs besides the request. */
export interface PolicyAuditContext {
  cluster: ClusterObjects;
  reviews: AccessReviews;
  /** The cluster's enforcement of the policy's function (clusters.yaml), which replaces the binding's actions. */
  enforcement?: Enforcement;
}

const compiledPolicies = new WeakMap<ValidatingPolicyWebhook, CompiledValidatingPolicy>();

/** The actions a cluster's enforcement stands for, else the binding's. */
function actionsInEffect(policy: ValidatingPolicyWebhook, enforcement: Enforcement | undefined): ValidationAction[] {
  return enforcement ? [enforcement] : policy.validatingPolicy.binding.validationActions;
}

/** The mode a set of actions amounts to. */
function modeOf(actions: readonly ValidationAction[]): Enforcement {
  if (actions.includes('Deny')) return 'Deny';
  return actions.includes('Warn') ? 'Warn' : 'Audit';
}

/** A validating policy's verdict on a request, as the API server would give it natively in this cluster. */
export async function auditValidatingPolicy(
  policy: ValidatingPolicyWebhook,
  request: AdmissionRequest,
  context: PolicyAuditContext,
): Promise<PolicyVerdict> {
  const { spec, binding, params } = policy.validatingPolicy;
  let compiled = compiledPolicies.get(policy);
  if (!compiled) {
    compiled = compileValidatingPolicy(spec, { kubernetesVersion: policy.registration.kubernetesVersion });
    compiledPolicies.set(policy, compiled);
  }
  const validationActions = actionsInEffect(policy, context.enforcement);
  const source = spec.paramKind ? await context.cluster.paramSource(spec.paramKind, params, spec.name) : undefined;
  const namespace = request.namespace ? await context.cluster.namespace(request.namespace) : undefined;
  const hooks = [{ policy: compiled, bindings: [{ ...binding, validationActions }] }];
  const dispatch = (authorize?: Authorize): PoliciesVerdict =>
    dispatchValidating(hooks, request, {
      namespace: (name) => (name === request.namespace ? namespace : undefined),
      equivalents: (resource, sub) => builtinEquivalents(resource, sub),
      params: () => source,
      ...(authorize ? { authorize } : {}),
    });
  const verdict = dispatch(await context.reviews.settleEvaluation(dispatch));
  const out: PolicyVerdict = {
    result: 'allowed',
    rejected: false,
    validationActions,
    enforcement: context.enforcement ?? modeOf(validationActions),
  };
  if (verdict.warnings.length) out.warnings = verdict.warnings;
  if (Object.keys(verdict.auditAnnotations).length) out.auditAnnotations = verdict.auditAnnotations;
  const failures = verdict.auditAnnotations[VALIDATION_FAILURE_ANNOTATION];
  if (!verdict.allowed) {
    out.result = 'denied';
    out.rejected = true;
    out.message = verdict.status!.detail;
  } else if (verdict.warnings.length) {
    out.result = 'warned';
    out.message = verdict.warnings.join('; ');
  } else if (failures) {
    out.result = 'audited';
    out.message = (JSON.parse(failures) as Array<{ message: string }>).map((f) => f.message).join('; ');
  }
  return out;
}

/** A mutating policy's change to a request's object (as a JSON patch), or its refusal under failurePolicy Fail. */
export async function auditMutatingPolicy(
  policy: MutatingPolicyWebhook,
  request: AdmissionRequest,
  context: PolicyAuditContext,
): Promise<PolicyVerdict> {
  const { spec, params: own } = policy.mutatingPolicy;
  const failed = (message: string): PolicyVerdict => ({
    result: 'error',
    rejected: true,
    message: `${message} (failurePolicy ${spec.failurePolicy ?? 'Fail'})`,
  });
  // Params from the cluster where it has them; otherwise the definition's own.
  const source = spec.paramKind ? await context.cluster.paramSource(spec.paramKind, own, spec.name) : undefined;
  const namespaceObject = request.namespace ? await context.cluster.namespace(request.namespace) : undefined;
  const run = (authorize?: Authorize) =>
    policy.evaluate(request, {
      ...(spec.paramKind ? { paramSources: () => source } : {}),
      ...(namespaceObject ? { namespaceObject } : {}),
      ...(authorize ? { authorize } : {}),
    });
  try {
    const outcome = run(await context.reviews.settleEvaluation(run));
    if (!outcome.allowed) return failed(outcome.status?.message ?? `policy '${spec.name}' refused the request`);
    // What the API server would store anyway (its defaults) is no change of the policy's.
    const stored = (object: unknown) => defaultObject(request.kind, object as KubeObject);
    const patch = outcome.object && request.object ? diffPatch(stored(request.object), stored(outcome.object)) : [];
    return patch.length ? { result: 'patched', rejected: false, patch } : { result: 'allowed', rejected: false };
  } catch (err) {
    return failed(`policy '${spec.name}': ${(err as Error).message}`);
  }
}
