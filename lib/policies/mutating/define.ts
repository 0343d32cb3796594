/**
 * `defineMutatingPolicy`: a MutatingAdmissionPolicy and its binding, written with the API's
 * field names, served from Lambda as a mutating webhook that evaluates the policy in-function:
 * the webhook's JSONPatch turns the object into the one the native policy would produce.
 */
import { deny } from '../../admission/decision.ts';
import { defineMutatingWebhook, type AdmissionWebhook } from '../../admission/webhook.ts';
import type { LabelSelector } from '../../registration.ts';
import type { AdmissionRequest, KubeObject } from '../../review/schemas.ts';
import type { TypedRule } from '../../rule-builder.ts';
import {
  type CompiledMutatingPolicy,
  compileMutatingPolicy,
  evaluateMutatingPolicy,
  type Mutation,
  type NamedExpression,
  type PolicyOutcome,
} from './evaluate.ts';
import { policyRegexLoader } from '../cel.ts';
import type { Authorize } from './cel.ts';
import type { KindSchema } from './mutation.ts';
import { type CrdSchema, crdSchema } from './smd/crd.ts';
import { builtinSchema, builtinTypeName } from './smd/schema.ts';

/** A binding's reference to its param object (MutatingAdmissionPolicyBinding `spec.paramRef`). */
export interface ParamRef {
  name?: string;
  namespace?: string;
  selector?: LabelSelector;
  parameterNotFoundAction?: 'Allow' | 'Deny';
}

/** Which requests a policy (or its binding) takes: MatchResources with typed rules. */
export interface PolicyMatchResources<T = KubeObject> {
  resourceRules: Array<TypedRule<T>>;
  excludeResourceRules?: Array<TypedRule<KubeObject>>;
  namespaceSelector?: LabelSelector;
  objectSelector?: LabelSelector;
  matchPolicy?: 'Exact' | 'Equivalent';
}

/** A mutating policy as `defineMutatingPolicy` takes it: MutatingAdmissionPolicy's fields and its binding's. */
export interface MutatingPolicyDefinition<T = KubeObject> {
  /** The policy's name (a DNS-1123 label): the policy, its binding and its function are named after it. */
  name: string;
  matchConstraints: PolicyMatchResources<T>;
  matchConditions?: NamedExpression[];
  variables?: NamedExpression[];
  mutations: Mutation[];
  /** `IfNeeded`: evaluated once more when a later mutation (a webhook's) changed the object. Default `Never`. */
  reinvocationPolicy?: 'Never' | 'IfNeeded';
  /** What an error of the policy does: `Fail` (default) refuses the request, `Ignore` admits it unchanged by the failing mutation. */
  failurePolicy?: 'Fail' | 'Ignore';
  paramKind?: { apiVersion: string; kind: string };
  /** The binding: its name (default `<name>-binding`), paramRef and matchResources. */
  binding?: { name?: string; paramRef?: ParamRef; matchResources?: Partial<PolicyMatchResources> };
  /** The openAPIV3Schema of each custom kind the policy mutates with apply configurations, by `group/version/Kind`. */
  schemas?: Record<string, CrdSchema>;
  /** Served from Lambda: the param object for a request (the native policy reads it from paramRef). */
  params?: (request: AdmissionRequest) => unknown;
  /** Served from Lambda: the request's Namespace object (`namespaceObject`; null unless given). */
  namespaceObject?: (request: AdmissionRequest) => unknown;
  /** Served from Lambda: what `authorizer` checks answer (no opinion unless given). */
  authorize?: Authorize;
  /** `auto` (default): native where the cluster runs mutating policies, a webhook elsewhere. */
  serve?: 'auto' | 'native' | 'webhook';
}

/** A defined mutating policy: the webhook that serves it from Lambda, the definition and its evaluation. */
export interface MutatingPolicy extends AdmissionWebhook {
  mutatingPolicy: MutatingPolicyDefinition<KubeObject>;
  /** Evaluates the policy on a request as the API server would (the native form). */
  evaluate(
    request: AdmissionRequest,
    options?: { params?: unknown; namespaceObject?: unknown; authorize?: Authorize },
  ): PolicyOutcome;
}

/** The merge schema of the request's kind: built-in, or from the definition's CRD schemas. */
function kindSchemaOf(
  definition: MutatingPolicyDefinition<KubeObject>,
  request: AdmissionRequest,
  cache: Map<string, KindSchema>,
) {
  const { group, version, kind } = request.kind;
  const id = `${group}/${version}/${kind}`;
  let found = cache.get(id);
  if (!found) {
    const builtin = builtinTypeName(group, version, kind);
    if (builtin) found = { schema: builtinSchema(), typeName: builtin, builtin: true };
    else {
      const crd = definition.schemas?.[id];
      if (crd) found = { ...crdSchema(group, version, kind, crd), builtin: false };
    }
    if (found) cache.set(id, found);
  }
  return found;
}

/**
 * Defines a mutating admission policy. The result is a mutating webhook (deployed where a
 * cluster cannot run the policy natively) whose function evaluates the policy as the API server
 * does; `evaluate` gives the native evaluation's outcome for tests.
 */
export function defineMutatingPolicy<T extends KubeObject = KubeObject>(
  definition: MutatingPolicyDefinition<T>,
): MutatingPolicy {
  const def = definition as unknown as MutatingPolicyDefinition<KubeObject>;
  const spec = {
    name: def.name,
    bindingName: def.binding?.name ?? `${def.name}-binding`,
    failurePolicy: def.failurePolicy ?? 'Fail',
    matchConditions: def.matchConditions ?? [],
    variables: def.variables ?? [],
    mutations: def.mutations,
  };
  // Compiled on first use: a bundle loads RE2 (a chunk of its own) before compiling expressions
  // that use it, which `mutate` awaits; tools and tests load it on demand.
  let compiled: CompiledMutatingPolicy | undefined;
  const compiledPolicy = () => (compiled ??= compileMutatingPolicy(spec));
  const regexReady = policyRegexLoader(spec);
  // Compiling at definition makes a broken expression fail lint and build; only a bundle inside
  // Lambda whose expressions need RE2 waits for it to load.
  if (!(process.env.AWS_LAMBDA_FUNCTION_NAME && regexReady())) compiledPolicy();
  const schemas = new Map<string, KindSchema>();
  const evaluate: MutatingPolicy['evaluate'] = (request, options = {}) =>
    evaluateMutatingPolicy(compiledPolicy(), {
      request,
      params: options.params ?? def.params?.(request) ?? null,
      namespaceObject: options.namespaceObject ?? def.namespaceObject?.(request) ?? null,
      ...((options.authorize ?? def.authorize) ? { authorize: (options.authorize ?? def.authorize) as Authorize } : {}),
      kindSchema: kindSchemaOf(def, request, schemas),
    });
  const constraints = def.matchConstraints;
  const webhook = defineMutatingWebhook<KubeObject>({
    name: def.name,
    rules: constraints.resourceRules,
    ...(constraints.namespaceSelector ? { namespaceSelector: constraints.namespaceSelector } : {}),
    ...(constraints.objectSelector ? { objectSelector: constraints.objectSelector } : {}),
    matchPolicy: constraints.matchPolicy ?? 'Equivalent',
    failurePolicy: def.failurePolicy ?? 'Fail',
    reinvocationPolicy: def.reinvocationPolicy ?? 'Never',
    mutate: (_object, request) => {
      const run = () => {
        const outcome = evaluate(request as AdmissionRequest);
        if (outcome.errors.length && (def.failurePolicy ?? 'Fail') === 'Fail')
          return deny(outcome.errors[0] as string, { code: 403, reason: 'Invalid' });
        return outcome.changed && outcome.object ? outcome.object : undefined;
      };
      const loading = regexReady();
      return loading ? loading.then(run) : run();
    },
  });
  return { ...webhook, mutatingPolicy: def, evaluate };
}
