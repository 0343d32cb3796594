/**
 * The API server's MutatingAdmissionPolicy plugin on one request (admission/plugin/policy/generic
 * policy_dispatcher.go, mutating/dispatcher.go): each policy whose matchConstraints match, each
 * of its bindings that matches, each param; the invocations run in order, each on the object the
 * previous left; configuration and mutation errors follow each policy's failurePolicy, the first
 * one is the answer (code 403, its reason); reinvocation as reinvocationcontext.go keeps it.
 */
import type { Authorize } from '../cel.ts';
import { type MatchEnvironment, type MatchResult, matchResources } from '../generic/matching.ts';
import { collectParams, type ParamSources } from '../generic/params.ts';
import type { MatchedAs } from '../generic/types.ts';
import type { AdmissionRequest, KubeObject } from '../../review/schemas.ts';
import type { CompiledMutatingPolicy } from './evaluate.ts';
import { evaluateMutatingPolicy } from './evaluate.ts';
import { jsonEqual } from './json-patch.ts';
import type { KindSchema, MutationStatus } from './mutation.ts';
import type { MutatingBindingSpec } from './types.ts';

/**
 * The plugin's memory across one request's invocations (reinvocationcontext.go): the object it
 * last gave, the reinvocable policies invoked since the object last changed, and the policies to
 * run when reinvoked.
 */
export class PolicyReinvokeContext {
  private lastOutput: unknown = undefined;
  private previouslyInvoked = new Set<string>();
  private reinvoke = new Set<string>();

  /** True when the policy is to run in the reinvocation. */
  shouldReinvoke(key: string): boolean {
    return this.reinvoke.has(key);
  }

  /** True when `object` differs from what the policies last gave. */
  isOutputChangedSinceLastPolicyInvocation(object: unknown): boolean {
    return !jsonEqual(this.lastOutput ?? null, object ?? null);
  }

  /** Keeps a copy of what the policies gave. */
  setLastPolicyInvocationOutput(object: unknown): void {
    this.lastOutput = object === null || object === undefined ? null : structuredClone(object);
  }

  /** Notes a reinvocable (`IfNeeded`) policy as invoked. */
  addReinvocablePolicyToPreviouslyInvoked(key: string): void {
    this.previouslyInvoked.add(key);
  }

  /** The object changed: every reinvocable policy invoked so far is to run again. */
  requireReinvokingPreviouslyInvokedPlugins(): void {
    if (this.previouslyInvoked.size === 0) return;
    for (const key of this.previouslyInvoked) this.reinvoke.add(key);
    this.previouslyInvoked = new Set();
  }
}

/** A compiled policy and its bindings. */
export interface MutatingPolicyHook {
  policy: CompiledMutatingPolicy;
  bindings: MutatingBindingSpec[];
}

/** What dispatching needs from the cluster: namespaces, equivalent resources, params, the authorizer, schemas. */
export interface MutatingDispatchEnvironment extends MatchEnvironment {
  params?: ParamSources;
  authorize?: Authorize;
  /** True: the request's object is the API server's decoding of its kind (a webhook's), not read as typed again. */
  objectIsTyped?: boolean;
  /** True: the Namespace is matched against, but the expressions' `namespaceObject` is null (as served from Lambda). */
  withoutNamespaceObject?: boolean;
  /** The merge schema of a kind (built-in or a CRD's); undefined when unknown. */
  kindSchema?(kind: MatchedAs['kind']): KindSchema | undefined;
}

/** Options of one invocation of the plugin. */
export interface DispatchOptions {
  /** The plugin's context, kept across the request's invocations; pass the same one when reinvoking. */
  context?: PolicyReinvokeContext;
  /** True for the reinvocation (the admission chain's second run). */
  reinvocation?: boolean;
}

/** The plugin's answer on a request. */
export interface MutatingPolicyOutcome {
  allowed: boolean;
  object: KubeObject | null;
  /** The denial: the first error under failurePolicy Fail, or an error with a status of its own. */
  status?: MutationStatus;
  /** True when the policies changed the object, so the chain is to be run again for reinvocable plugins. */
  shouldReinvoke: boolean;
}

/** One policy-binding-param tuple that matched the request. */
interface Invocation {
  policy: CompiledMutatingPolicy;
  binding: MutatingBindingSpec;
  matched: MatchedAs;
  param: KubeObject | null;
}

/** A policy error: the policy, its binding when known, the message and the reason it sets. */
interface PolicyError {
  policy: CompiledMutatingPolicy;
  binding?: string;
  message: string;
  reason?: string;
}

/** PolicyError.Error(): the text of a policy error. */
function policyErrorText(e: PolicyError): string {
  return e.binding === undefined
    ? `policy ${JSON.stringify(e.policy.spec.name)} denied request: ${e.message}`
    : `policy '${e.policy.spec.name}' with binding '${e.binding}' denied request: ${e.message}`;
}

/** The invocations of the hooks on a request, and the configuration errors met. */
function invocationsOf(
  hooks: readonly MutatingPolicyHook[],
  request: AdmissionRequest,
  env: MutatingDispatchEnvironment,
  errors: PolicyError[],
): Invocation[] {
  const out: Invocation[] = [];
  const configError = (policy: CompiledMutatingPolicy, binding: string | undefined, error: string) =>
    errors.push({
      policy,
      binding,
      message: `failed to configure ${binding === undefined ? 'policy' : 'binding'}: ${error}`,
    });
  for (const { policy, bindings } of hooks) {
    const spec = policy.spec;
    const defined: MatchResult = spec.matchConstraints
      ? matchResources(request, spec.matchConstraints, env)
      : { matches: false, error: 'policy contained no match constraints, a required field' };
    if (defined.error !== undefined) {
      configError(policy, undefined, defined.error);
      continue;
    }
    if (!defined.matches) continue;
    if (spec.paramKind && !env.params?.(spec.paramKind)) {
      const { apiVersion, kind } = spec.paramKind;
      const version = apiVersion.includes('/') ? apiVersion : `/${apiVersion}`;
      configError(policy, undefined, `failed to find resource referenced by paramKind: '${version}, Kind=${kind}'`);
      continue;
    }
    for (const binding of bindings) {
      const bound: MatchResult = binding.matchResources
        ? matchResources(request, binding.matchResources, env)
        : { matches: true, as: defined.as };
      if (bound.error !== undefined) {
        configError(policy, binding.name, bound.error);
        continue;
      }
      if (!bound.matches) continue;
      const found = collectParams(spec.paramKind, binding.paramRef, request.namespace ?? '', env.params);
      if (found.error !== undefined) {
        configError(policy, binding.name, found.error);
        continue;
      }
      for (const param of found.params) out.push({ policy, binding, matched: defined.as, param });
    }
  }
  return out;
}

/** The key of an invocation for reinvocation: policy, binding and param names. */
const keyOf = (i: Invocation) =>
  JSON.stringify([
    i.policy.spec.name,
    i.binding.name,
    i.param?.metadata?.namespace ?? '',
    i.param?.metadata?.name ?? '',
  ]);

/** Runs the policies on the request's object (as the API server received it) and answers as the plugin does. */
export function dispatchMutating(
  hooks: readonly MutatingPolicyHook[],
  request: AdmissionRequest,
  env: MutatingDispatchEnvironment = {},
  options: DispatchOptions = {},
): MutatingPolicyOutcome {
  const original = (request.object ?? null) as KubeObject | null;
  const errors: PolicyError[] = [];
  const invocations = invocationsOf(hooks, request, env, errors);
  const ran = invocations.length ? invoke(invocations, request, env, options, errors) : undefined;
  if (ran && 'status' in ran) return { allowed: false, object: original, status: ran.status, shouldReinvoke: false };
  const failing = errors.filter((e) => e.policy.failurePolicy !== 'Ignore');
  if (failing.length) {
    const first = failing[0]!;
    const status = { code: 403, reason: first.reason ?? 'Forbidden', message: policyErrorText(first) };
    return { allowed: false, object: original, status, shouldReinvoke: false };
  }
  return { allowed: true, object: ran?.object ?? original, shouldReinvoke: ran?.shouldReinvoke ?? false };
}

/** The mutating plugin's part (dispatchInvocations): the invocations in order, with reinvocation. */
function invoke(
  invocations: Invocation[],
  request: AdmissionRequest,
  env: MutatingDispatchEnvironment,
  options: DispatchOptions,
  errors: PolicyError[],
): { object: KubeObject | null; shouldReinvoke: boolean } | { status: MutationStatus } {
  // Without a context from the caller nothing reinvokes: no memory of the output is kept.
  const keep = options.context !== undefined;
  const context = options.context ?? new PolicyReinvokeContext();
  let object = (request.object ?? null) as KubeObject | null;
  if (options.reinvocation && context.isOutputChangedSinceLastPolicyInvocation(object))
    context.requireReinvokingPreviouslyInvokedPlugins();
  const namespace = namespaceOf(request, env);
  if (namespace && 'status' in namespace) {
    if (keep) context.setLastPolicyInvocationOutput(object);
    return namespace;
  }
  let shouldReinvoke = false;
  for (const invocation of invocations) {
    const { policy, binding } = invocation;
    const key = keyOf(invocation);
    const outcome = evaluateMutatingPolicy(
      policy,
      {
        request: { ...request, object },
        matched: invocation.matched,
        params: invocation.param,
        namespace: namespace?.object ?? null,
        ...(env.authorize ? { authorize: env.authorize } : {}),
        ...(env.kindSchema ? { kindSchema: env.kindSchema(invocation.matched.kind) } : {}),
        ...(env.objectIsTyped && object === request.object ? { objectIsTyped: true } : {}),
      },
      { proceed: () => !options.reinvocation || context.shouldReinvoke(key) },
    );
    for (const message of outcome.errors) errors.push({ policy, binding: binding.name, message, reason: 'Invalid' });
    if (!outcome.matched) continue;
    if (outcome.status) {
      if (keep) context.setLastPolicyInvocationOutput(object);
      return { status: outcome.status };
    }
    if (outcome.changed) {
      object = outcome.object as KubeObject | null;
      context.requireReinvokingPreviouslyInvokedPlugins();
      shouldReinvoke = true;
    }
    if (policy.spec.reinvocationPolicy === 'IfNeeded') context.addReinvocablePolicyToPreviouslyInvoked(key);
  }
  if (keep) context.setLastPolicyInvocationOutput(object);
  return { object, shouldReinvoke };
}

/** The request's Namespace object (none for cluster-scoped requests and Namespaces), or the NotFound status. */
function namespaceOf(
  request: AdmissionRequest,
  env: MutatingDispatchEnvironment,
): { object: KubeObject } | { status: MutationStatus } | undefined {
  const kind = request.kind;
  const isNamespace = kind?.group === '' && kind?.version === 'v1' && kind?.kind === 'Namespace';
  const name = isNamespace ? '' : (request.namespace ?? '');
  if (!name || !env.namespace || env.withoutNamespaceObject) return undefined;
  const found = env.namespace(name);
  if (found) return { object: found };
  return { status: { code: 404, reason: 'NotFound', message: `namespaces ${JSON.stringify(name)} not found` } };
}
