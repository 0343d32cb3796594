/**
 * `defineMutatingPolicy`: a MutatingAdmissionPolicy and its binding, written once in a project's
 * functions/<name>/index.ts with the API's field names and defineValidatingPolicy's layout. The
 * same definition is the native policy (for clusters whose API server runs mutating policies) and
 * a mutating webhook that evaluates it in-function: its JSON patch turns the object into the one
 * the native policy would produce.
 */
import { deny } from '../../admission/decision.ts';
import { defineMutatingWebhook, type AdmissionWebhook } from '../../admission/webhook.ts';
import type { LambdaSettings, MatchCondition } from '../../registration.ts';
import type { AdmissionRequest, KubeObject } from '../../review/schemas.ts';
import { type Authorize, CelEngineNotLoaded, policyChunkLoader } from '../cel.ts';
import {
  bindingHead,
  bindingTail,
  checkMatchConstraints,
  checkParamRef,
  type PolicyMatchConstraints,
  specHead,
  specTail,
} from '../generic/define.ts';
import { paramSourcesOf, type ParamSources } from '../generic/params.ts';
import type { MatchedAs, MatchResources, ParamKind, ParamRef, Variable } from '../generic/types.ts';
import { servedCompiler } from '../../handler/served-versions.ts';
import { type MutatingPolicyOutcome, dispatchMutating, type MutatingDispatchEnvironment } from './dispatch.ts';
import { type CompiledMutatingPolicy, compileMutatingPolicy } from './evaluate.ts';
import type { KindSchema } from './mutation.ts';
import { type CrdSchema, crdSchema } from './smd/crd.ts';
import { builtinSchema, builtinTypeName } from './smd/schema.ts';
import type { MutatingBindingSpec, MutatingPolicySpec, Mutation, ReinvocationPolicy } from './types.ts';
import { afterChunks } from '../../matchconditions/regex-loader.ts';

/** What a user declares for a MutatingAdmissionPolicy and its binding. */
export interface MutatingPolicyDefinition<T = KubeObject> {
  /** Function name (DNS-1123 label): the Lambda, the URL path, and by default the policy's and binding's names. */
  name: string;
  /** The MutatingAdmissionPolicy's name; default `name`. */
  policyName?: string;
  /** The MutatingAdmissionPolicyBinding's name; default `name`. */
  bindingName?: string;
  /**
   * Which requests the policy applies to: typed rules (`on(Deployment).create()`), and
   * namespaceSelector (default: every namespace but the system ones), objectSelector,
   * excludeResourceRules, matchPolicy (default `Equivalent`).
   */
  matchConstraints: PolicyMatchConstraints<T>;
  matchConditions?: MatchCondition[];
  /** Named CEL expressions the others read as `variables.<name>`, each evaluated at most once per invocation. */
  variables?: Variable[];
  /** The mutations, applied in order: `ApplyConfiguration` (`Object{...}`) or `JSONPatch` (`[JSONPatch{...}]`). */
  mutations: Mutation[];
  /** `IfNeeded`: evaluated once more when a later mutation (a webhook's) changed the object. Default `Never`. */
  reinvocationPolicy?: ReinvocationPolicy;
  /** What an error does: `Fail` (default) refuses the request, `Ignore` admits it without the failing mutation. */
  failurePolicy?: 'Fail' | 'Ignore';
  /** The kind of the param objects the expressions read as `params`. */
  paramKind?: ParamKind;
  /** The binding's params: by name or selector, namespace, parameterNotFoundAction (default `Deny`). */
  paramRef?: ParamRef;
  /** The binding's narrowing of the requests (every request of the policy by default). */
  matchResources?: MatchResources;
  /**
   * The param objects the function evaluates with when served as a webhook (the API server's
   * params are not reachable from Lambda), and that the test kit finds.
   */
  params?: KubeObject[];
  /** The openAPIV3Schema of each custom kind the policy mutates with apply configurations, by `group/version/Kind`. */
  schemas?: Record<string, CrdSchema>;
  /** `auto` (default): native where the cluster runs mutating policies, a webhook elsewhere. */
  serve?: 'auto' | 'native' | 'webhook';
  /**
   * The Kubernetes version ("1.36") whose CEL environment evaluates it in-function for a caller whose
   * version the fleet does not give (a fleet cluster's `kubeVersion` comes first); the newest by default.
   */
  kubernetesVersion?: string;
  /** Budget of one review when served as a webhook, 1 to 30 seconds; default 5. */
  timeoutSeconds?: number;
  /** Caller authentication when served as a webhook, as for webhooks. */
  auth?: 'auto' | 'bearer' | 'path-secret' | 'none';
  lambda?: LambdaSettings;
}

/** The policy a definition declares: its spec, binding, params and schemas, defaults applied. */
export interface DefinedMutatingPolicy {
  spec: MutatingPolicySpec;
  binding: MutatingBindingSpec;
  params: KubeObject[];
  schemas: Record<string, CrdSchema>;
  serve: 'auto' | 'native' | 'webhook';
}

/** What a native evaluation reads of the cluster beside the policy. */
export interface MutatingEvaluationOptions {
  /** Param objects in the cluster; default the policy's own `params`. */
  params?: KubeObject[];
  /** Where the param objects of a kind are read (a cluster's); takes the place of `params`. */
  paramSources?: ParamSources;
  /** Labels of the request's namespace (its `kubernetes.io/metadata.name` label is always set). */
  namespaceLabels?: Record<string, string>;
  /** The request's Namespace object; default one with the namespace's name and labels. */
  namespaceObject?: KubeObject;
  /** Answers `authorizer` checks; by default no opinion. */
  authorize?: Authorize;
  /** True: in the environment of the webhook serving the policy (`namespaceObject` null, no authorizer opinion). */
  served?: boolean;
}

/** A defined mutating policy: a mutating webhook (handler, registration) that also carries the policy. */
export type MutatingPolicyWebhook = AdmissionWebhook & {
  mutatingPolicy: DefinedMutatingPolicy;
  /** Evaluates the policy on a request as the API server would natively (matching included). */
  evaluate(request: AdmissionRequest, options?: MutatingEvaluationOptions): MutatingPolicyOutcome;
};

const REINVOCATION: readonly ReinvocationPolicy[] = ['Never', 'IfNeeded'];
const PATCH_TYPES = ['ApplyConfiguration', 'JSONPatch'];

/** Checks what the API server would refuse of a definition, naming the field and the fix. */
function checkDefinition(d: MutatingPolicyDefinition<unknown>): void {
  const where = `policy ${d.name}`;
  checkMatchConstraints(d);
  if (!Array.isArray(d.mutations) || !d.mutations.length)
    throw new TypeError(`${where}: mutations must hold at least one { patchType, applyConfiguration | jsonPatch }`);
  for (const [i, m] of d.mutations.entries()) {
    const at = `${where}: mutations[${i}]`;
    if (!PATCH_TYPES.includes(m?.patchType))
      throw new TypeError(`${at}.patchType must be ApplyConfiguration or JSONPatch`);
    const body = m.patchType === 'ApplyConfiguration' ? m.applyConfiguration : m.jsonPatch;
    const field = m.patchType === 'ApplyConfiguration' ? 'applyConfiguration' : 'jsonPatch';
    if (typeof body?.expression !== 'string' || !body.expression.trim())
      throw new TypeError(`${at}.${field}.expression must be a CEL expression`);
  }
  if (d.reinvocationPolicy !== undefined && !REINVOCATION.includes(d.reinvocationPolicy))
    throw new TypeError(`${where}: reinvocationPolicy must be Never or IfNeeded`);
  checkParamRef(d);
}

/** The policy, binding and params of a definition, defaults applied. */
export function completeMutatingPolicy(d: MutatingPolicyDefinition<unknown>): DefinedMutatingPolicy {
  checkDefinition(d);
  const spec: MutatingPolicySpec = {
    ...specHead(d),
    mutations: d.mutations.map((m) => structuredClone(m)),
    reinvocationPolicy: d.reinvocationPolicy ?? 'Never',
    ...specTail(d),
  };
  const binding: MutatingBindingSpec = { ...bindingHead(d), ...bindingTail(d) };
  return { spec, binding, params: [...(d.params ?? [])], schemas: { ...d.schemas }, serve: d.serve ?? 'auto' };
}

/** The merge schema of a kind: built-in, or from the policy's CRD schemas; cached per kind. */
export function kindSchemas(schemas: Record<string, CrdSchema>): (kind: MatchedAs['kind']) => KindSchema | undefined {
  const cache = new Map<string, KindSchema | undefined>();
  return ({ group, version, kind }) => {
    const id = `${group}/${version}/${kind}`;
    if (cache.has(id)) return cache.get(id);
    let found: KindSchema | undefined;
    const builtin = builtinTypeName(group, version, kind);
    if (builtin) found = { schema: builtinSchema(), typeName: builtin, builtin: true };
    else if (schemas[id]) found = { ...crdSchema(group, version, kind, schemas[id]), builtin: false };
    cache.set(id, found);
    return found;
  };
}

/** The Namespace object of a name, with its name label and `labels`. */
const namespaceNamed = (name: string, labels: Record<string, string> = {}): KubeObject =>
  ({
    apiVersion: 'v1',
    kind: 'Namespace',
    metadata: { name, labels: { 'kubernetes.io/metadata.name': name, ...labels } },
  }) as KubeObject;

/**
 * Defines a MutatingAdmissionPolicy with its binding; default-export it from
 * functions/<name>/index.ts. Served as a webhook, the function evaluates the policy itself: the
 * API server has applied the rules and selectors; the function applies resourceNames,
 * excludeResourceRules, the binding's matchResources, matchConditions and the mutations, with
 * `params` from the definition; `namespaceObject` is null and the authorizer has no opinion there.
 */
export function defineMutatingPolicy<T extends KubeObject = KubeObject>(
  definition: MutatingPolicyDefinition<T>,
): MutatingPolicyWebhook {
  const policy = completeMutatingPolicy(definition as MutatingPolicyDefinition<unknown>);
  const { namespaceSelector, objectSelector, ...inFunction } = policy.spec.matchConstraints!;
  const served = { ...policy.spec, matchConstraints: inFunction };
  // Compiled on first use: a bundle loads RE2 (a chunk of its own) before compiling expressions
  // that use it, which the handler awaits; tools and tests compile when the module loads, so a
  // broken expression fails lint and build.
  let native: CompiledMutatingPolicy | undefined;
  const version = definition.kubernetesVersion ? { kubernetesVersion: definition.kubernetesVersion } : {};
  const nativeCompiled = () => (native ??= compileMutatingPolicy(policy.spec, version));
  // Type-checked in-function, so compiled in the whole environment: the libraries chunk too.
  const chunksReady = policyChunkLoader(served, true);
  // Type-checked in-function too: an apply configuration's type decides the API server's error text.
  const servedCompiled = servedCompiler(
    definition.kubernetesVersion,
    (kubernetesVersion) => compileMutatingPolicy(served, kubernetesVersion ? { kubernetesVersion } : {}),
    chunksReady,
  );
  if (!process.env.AWS_LAMBDA_FUNCTION_NAME)
    try {
      nativeCompiled();
    } catch (err) {
      // A bundle loaded outside Lambda, its engine a chunk not loaded yet: compiled on first use.
      if (!(err instanceof CelEngineNotLoaded)) throw err;
    }
  const kindSchema = kindSchemas(policy.schemas);
  const params: ParamSources = paramSourcesOf(policy.params);
  const evaluate: MutatingPolicyWebhook['evaluate'] = (request, options = {}) => {
    const env: MutatingDispatchEnvironment = {
      namespace: (name) => options.namespaceObject ?? namespaceNamed(name, options.namespaceLabels),
      params: options.paramSources ?? (options.params ? paramSourcesOf(options.params) : params),
      kindSchema,
      ...(options.authorize && !options.served ? { authorize: options.authorize } : {}),
      ...(options.served ? { withoutNamespaceObject: true } : {}),
    };
    return dispatchMutating([{ policy: nativeCompiled(), bindings: [policy.binding] }], request, env);
  };
  const webhook = defineMutatingWebhook<KubeObject>({
    name: definition.name,
    rules: policy.spec.matchConstraints!.resourceRules!.map(({ resourceNames: _, ...r }) => r),
    namespaceSelector,
    ...(Object.keys(objectSelector ?? {}).length ? { objectSelector } : {}),
    matchPolicy: policy.spec.matchConstraints!.matchPolicy,
    failurePolicy: policy.spec.failurePolicy,
    reinvocationPolicy: policy.spec.reinvocationPolicy,
    ...(definition.kubernetesVersion ? { kubernetesVersion: definition.kubernetesVersion } : {}),
    ...(definition.timeoutSeconds ? { timeoutSeconds: definition.timeoutSeconds } : {}),
    ...(definition.auth ? { auth: definition.auth } : {}),
    ...(definition.lambda ? { lambda: definition.lambda } : {}),
    mutate: (_object, request, ctx) => {
      const run = () => {
        const outcome = dispatchMutating(
          [{ policy: servedCompiled(ctx.kubeVersion), bindings: [policy.binding] }],
          request as AdmissionRequest,
          // The API server decoded the object as its kind before sending it.
          { params, kindSchema, objectIsTyped: true },
        );
        if (!outcome.allowed)
          return deny(outcome.status!.message, { code: outcome.status!.code, reason: outcome.status!.reason });
        return outcome.object === request.object ? undefined : (outcome.object ?? undefined);
      };
      return afterChunks(chunksReady, run);
    },
  });
  return Object.assign(webhook, { mutatingPolicy: policy, evaluate });
}
