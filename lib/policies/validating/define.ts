/**
 * `defineValidatingPolicy`: a ValidatingAdmissionPolicy and its binding, written once in a
 * project's functions/<name>/index.ts. The same definition is the native policy (for clusters whose
 * API server evaluates policies) and a validating webhook that evaluates it in-function, answering
 * with the verdict, message, warnings and audit annotations the native policy would give.
 */
import { defineValidatingWebhook, type AdmissionWebhook } from '../../admission/webhook.ts';
import { resolveEnforcement } from '../../admission/enforcement.ts';
import type { LambdaSettings, MatchCondition } from '../../registration.ts';
import type { AdmissionRequest, KubeObject } from '../../review/schemas.ts';
import type { WebhookContext } from '../../webhook.ts';
import { type Authorize, policyChunkLoader } from '../cel.ts';
import {
  bindingHead,
  bindingTail,
  checkMatchConstraints,
  checkParamRef,
  type PolicyMatchConstraints,
  specHead,
  specTail,
} from '../generic/define.ts';
import { namespacedKindsOf, paramSourcesOf } from '../generic/params.ts';
import type { MatchResources, ParamKind, ParamRef, Variable } from '../generic/types.ts';
import { servedCompiler } from '../../handler/served-versions.ts';
import { dispatchValidating, VALIDATION_FAILURE_ANNOTATION, type PoliciesVerdict } from './dispatcher.ts';
import type {
  AuditAnnotation,
  ValidatingBindingSpec,
  ValidatingPolicySpec,
  Validation,
  ValidationAction,
} from './types.ts';
import { compileValidatingPolicy } from './validator.ts';
import { allow, deny, type Decision } from '../../admission/decision.ts';
import { afterChunks } from '../../matchconditions/regex-loader.ts';

export type { PolicyRule } from '../generic/define.ts';

/** What a user declares for a ValidatingAdmissionPolicy and its binding. */
export interface ValidatingPolicyDefinition<T = KubeObject> {
  /** Function name (DNS-1123 label): the Lambda, the URL path, and by default the policy's and binding's names. */
  name: string;
  /** The ValidatingAdmissionPolicy's name; default `name`. */
  policyName?: string;
  /** The ValidatingAdmissionPolicyBinding's name; default `name`. */
  bindingName?: string;
  /**
   * Which requests the policy applies to: typed rules (`on(Deployment).create().update()`), and
   * namespaceSelector (default: every namespace but the system ones), objectSelector,
   * excludeResourceRules, matchPolicy (default `Equivalent`).
   */
  matchConstraints: PolicyMatchConstraints<T>;
  matchConditions?: MatchCondition[];
  /** Named CEL expressions the others read as `variables.<name>`, each evaluated at most once. */
  variables?: Variable[];
  validations: Validation[];
  auditAnnotations?: AuditAnnotation[];
  /** What an expression error or a configuration error does: `Fail` (default) denies, `Ignore` admits. */
  failurePolicy?: 'Fail' | 'Ignore';
  /** The kind of the param objects the expressions read as `params`. */
  paramKind?: ParamKind;
  /**
   * Whether the paramKind is namespaced, which the function cannot ask the API server; by default
   * as `params` show it (cluster-scoped when it has params and none has a namespace).
   */
  paramScope?: 'Namespaced' | 'Cluster';
  /** The binding's actions on a failed validation; default `['Deny']`. A cluster's `enforcement` replaces them. */
  validationActions?: ValidationAction[];
  /** The binding's params: by name or selector, namespace, parameterNotFoundAction (default `Deny`). */
  paramRef?: ParamRef;
  /** The binding's narrowing of the requests (every request of the policy by default). */
  matchResources?: MatchResources;
  /**
   * The param objects the function evaluates with when served as a webhook (the API server's
   * params are not reachable from Lambda), and that the test kit finds.
   */
  params?: KubeObject[];
  /**
   * The Namespace objects the function reads `namespaceObject` from when served as a webhook (the
   * API server's are not reachable from Lambda); a request in a namespace not given reads null.
   * The test kit finds them too.
   */
  namespaces?: KubeObject[];
  /** `auto` (default): native where the cluster evaluates policies, a webhook elsewhere. */
  serve?: 'auto' | 'native' | 'webhook';
  /**
   * The Kubernetes version ("1.30") whose CEL environment evaluates it in-function for a caller whose
   * version the fleet does not give (a fleet cluster's `kubeVersion` comes first); the newest by default.
   */
  kubernetesVersion?: string;
  /** Budget of one review when served as a webhook, 1 to 30 seconds; default 5. */
  timeoutSeconds?: number;
  /** Caller authentication when served as a webhook, as for webhooks. */
  auth?: 'auto' | 'bearer' | 'path-secret' | 'none';
  lambda?: LambdaSettings;
}

/** The policy a definition declares: its spec, binding and params, defaults applied. */
export interface DefinedValidatingPolicy {
  spec: ValidatingPolicySpec;
  binding: ValidatingBindingSpec;
  params: KubeObject[];
  /** The Namespace objects of the definition (`namespaceObject` in-function). */
  namespaces: KubeObject[];
  serve: 'auto' | 'native' | 'webhook';
}

/** A defined policy: a validating webhook (handler, registration) that also carries the policy. */
export type ValidatingPolicyWebhook = AdmissionWebhook & { validatingPolicy: DefinedValidatingPolicy };

const ACTIONS: readonly ValidationAction[] = ['Deny', 'Warn', 'Audit'];

/** Checks what the API server would refuse of a definition, naming the field and the fix. */
function checkDefinition(d: ValidatingPolicyDefinition<unknown>): void {
  const where = `policy ${d.name}`;
  checkMatchConstraints(d);
  if (!Array.isArray(d.validations) || (!d.validations.length && !d.auditAnnotations?.length))
    throw new TypeError(`${where}: validations must hold at least one { expression } (or give auditAnnotations)`);
  for (const [i, v] of d.validations.entries())
    if (typeof v?.expression !== 'string' || !v.expression.trim())
      throw new TypeError(`${where}: validations[${i}].expression must be a CEL expression`);
  const actions = d.validationActions ?? ['Deny'];
  if (!actions.length || actions.some((a) => !ACTIONS.includes(a)) || new Set(actions).size !== actions.length)
    throw new TypeError(
      `${where}: validationActions must be distinct values of ${ACTIONS.join(', ')}, got ${JSON.stringify(actions)}`,
    );
  if (actions.includes('Deny') && actions.includes('Warn'))
    throw new TypeError(
      `${where}: validationActions may not hold both Deny and Warn (the API server refuses it); use Deny with Audit`,
    );
  checkParamRef(d);
}

/** The policy, binding and params of a definition, defaults applied. */
export function completeValidatingPolicy(d: ValidatingPolicyDefinition<unknown>): DefinedValidatingPolicy {
  checkDefinition(d);
  const spec: ValidatingPolicySpec = {
    ...specHead(d),
    validations: d.validations.map((v) => ({ ...v })),
    ...specTail(d),
    ...(d.auditAnnotations?.length ? { auditAnnotations: d.auditAnnotations.map((a) => ({ ...a })) } : {}),
  };
  const binding: ValidatingBindingSpec = {
    ...bindingHead(d),
    validationActions: [...(d.validationActions ?? ['Deny'])],
    ...bindingTail(d),
  };
  return {
    spec,
    binding,
    params: [...(d.params ?? [])],
    namespaces: [...(d.namespaces ?? [])],
    serve: d.serve ?? 'auto',
  };
}

/**
 * The audit annotations of a verdict as a webhook gives them: the API server prefixes a webhook's
 * keys with its name (a key may hold no `/`), so `<policy>/<key>` is `<key>` and the list of
 * validation failures is `validation_failure`.
 */
export function webhookAuditAnnotations(
  annotations: Record<string, string>,
  policyName: string,
): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [key, value] of Object.entries(annotations)) {
    if (key === VALIDATION_FAILURE_ANNOTATION) out.validation_failure = value;
    else if (key.startsWith(`${policyName}/`)) out[key.slice(policyName.length + 1)] = value;
  }
  return out;
}

/** The webhook's answer for a verdict: the native status's reason, code and message after its prefix. */
export function verdictDecision(verdict: PoliciesVerdict, policyName: string): Decision {
  let decision = verdict.allowed
    ? verdict.warnings.length
      ? allow(verdict.warnings)
      : allow()
    : deny(verdict.status!.detail, { code: verdict.status!.code, reason: verdict.status!.reason }).withWarnings(
        verdict.warnings,
      );
  const annotations = webhookAuditAnnotations(verdict.auditAnnotations, policyName);
  if (Object.keys(annotations).length) decision = decision.withAuditAnnotations(annotations);
  return decision;
}

/**
 * Defines a ValidatingAdmissionPolicy with its binding; default-export it from
 * functions/<name>/index.ts. Served as a webhook, the function evaluates the policy itself: the
 * API server has applied the rules and selectors; the function applies resourceNames,
 * excludeResourceRules, matchConditions and the validations, with `params` and `namespaceObject`
 * from the definition's `params` and `namespaces`; the authorizer has no opinion there.
 */
export function defineValidatingPolicy<T extends KubeObject = KubeObject>(
  definition: ValidatingPolicyDefinition<T>,
): ValidatingPolicyWebhook {
  return servePolicy(definition as ValidatingPolicyDefinition<unknown>);
}

/** The definition a policy's webhook was made from (the test kit serves it again in another environment). */
export const DEFINITION: unique symbol = Symbol('klw.validatingPolicyDefinition');

/** What the in-function evaluation reads besides the request; the test kit sets the authorizer. */
export interface InFunctionEnvironment {
  authorize?: Authorize;
}

/** The webhook evaluating a definition in-function (defineValidatingPolicy), in an environment. */
export function servePolicy(
  definition: ValidatingPolicyDefinition<unknown>,
  environment: InFunctionEnvironment = {},
): ValidatingPolicyWebhook {
  const policy = completeValidatingPolicy(definition);
  const { namespaceSelector, objectSelector, ...inFunction } = policy.spec.matchConstraints!;
  const served = { ...policy.spec, matchConstraints: inFunction };
  // A bundle loads RE2 and the Kubernetes libraries (chunks of their own) before compiling
  // expressions that use them.
  const chunksReady = policyChunkLoader(served);
  const compiledFor = servedCompiler(
    definition.kubernetesVersion,
    (kubernetesVersion) => compileValidatingPolicy(served, { kubernetesVersion, typeCheck: false }),
    chunksReady,
  );
  const params = paramSourcesOf(policy.params, paramScopeOf(definition, policy.params));
  const namespaces = new Map(policy.namespaces.map((n) => [n.metadata?.name ?? '', n]));
  const dispatchEnv = {
    params,
    namespace: (name: string) => namespaces.get(name),
    ...(environment.authorize ? { authorize: environment.authorize } : {}),
  };
  const webhook = defineValidatingWebhook({
    name: definition.name,
    rules: policy.spec.matchConstraints!.resourceRules!.map(({ resourceNames: _, ...r }) => r),
    namespaceSelector,
    ...(Object.keys(objectSelector ?? {}).length ? { objectSelector } : {}),
    failurePolicy: policy.spec.failurePolicy,
    matchPolicy: policy.spec.matchConstraints!.matchPolicy,
    ...(definition.kubernetesVersion ? { kubernetesVersion: definition.kubernetesVersion } : {}),
    ...(definition.timeoutSeconds ? { timeoutSeconds: definition.timeoutSeconds } : {}),
    ...(definition.auth ? { auth: definition.auth } : {}),
    ...(definition.lambda ? { lambda: definition.lambda } : {}),
    validate: (request, ctx) => {
      const run = () => {
        const actions = actionsFor(definition.name, policy.binding.validationActions, ctx);
        // The binding as defined unless an enforcement overrides its actions (dispatching never changes it).
        const binding =
          actions === policy.binding.validationActions
            ? policy.binding
            : { ...policy.binding, validationActions: actions };
        const verdict = dispatchValidating(
          [{ policy: compiledFor(ctx.kubeVersion), bindings: [binding] }],
          request as AdmissionRequest,
          dispatchEnv,
        );
        return verdictDecision(verdict, policy.spec.name);
      };
      return afterChunks(chunksReady, run);
    },
  });
  Object.defineProperty(webhook, DEFINITION, { value: definition });
  return Object.assign(webhook, { validatingPolicy: policy });
}

/** Whether a param kind is namespaced: as the definition says, else as its params show it. */
export function paramScopeOf(
  definition: Pick<ValidatingPolicyDefinition<unknown>, 'paramScope'>,
  params: readonly KubeObject[],
): (kind: ParamKind) => boolean {
  if (definition.paramScope) {
    const namespaced = definition.paramScope === 'Namespaced';
    return () => namespaced;
  }
  return namespacedKindsOf(params);
}

/**
 * The validation actions in effect: the calling cluster's `enforcement` (clusters.yaml), else a
 * KLW_ENFORCEMENT override, else the binding's.
 */
function actionsFor(name: string, actions: ValidationAction[], ctx: WebhookContext): ValidationAction[] {
  if (ctx.enforcement) return [ctx.enforcement];
  const resolved = resolveEnforcement({ name }, process.env);
  return resolved.source === 'registration' ? actions : [resolved.mode];
}
