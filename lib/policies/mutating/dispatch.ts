/**
 * Mutating policies run together as the API server's MutatingAdmissionPolicy plugin runs them:
 * in order, each on the object the previous ones left, their errors answered by each policy's
 * failurePolicy (the first one's text and reason `Invalid` under code 403), and reinvocation:
 * when the admission chain is run again because a later plugin (a webhook) changed the object,
 * only `IfNeeded` policies invoked before a change are run again.
 */
import type { AdmissionRequest, KubeObject } from '../../review/schemas.ts';
import type { MutatingPolicy } from './define.ts';
import { jsonEqual } from './json-patch.ts';

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

/** The outcome of the mutating policies on a request. */
export interface DispatchOutcome {
  allowed: boolean;
  object: KubeObject | null;
  /** The denial (first policy error under failurePolicy Fail), as the API server's status. */
  status?: { code: 403; reason: string; message: string };
  /** True when the policies changed the object, so the chain is to be run again for reinvocable plugins. */
  shouldReinvoke: boolean;
}

/** Options of one invocation of the plugin. */
export interface DispatchOptions {
  /** The plugin's context, kept across the request's invocations; pass the same one when reinvoking. */
  context?: PolicyReinvokeContext;
  /** True for the reinvocation (the chain's second run). */
  reinvocation?: boolean;
  params?: (policy: MutatingPolicy, request: AdmissionRequest) => unknown;
  namespaceObject?: unknown;
}

const keyOf = (policy: MutatingPolicy) =>
  `${policy.mutatingPolicy.name}/${policy.mutatingPolicy.binding?.name ?? `${policy.mutatingPolicy.name}-binding`}`;

/** Runs the policies (already matched to the request, in the API server's order) on the request's object. */
export function dispatchMutatingPolicies(
  policies: readonly MutatingPolicy[],
  request: AdmissionRequest,
  options: DispatchOptions = {},
): DispatchOutcome {
  const context = options.context ?? new PolicyReinvokeContext();
  let object = (request.object ?? null) as KubeObject | null;
  if (options.reinvocation && context.isOutputChangedSinceLastPolicyInvocation(object))
    context.requireReinvokingPreviouslyInvokedPlugins();
  let shouldReinvoke = false;
  const errors: string[] = [];
  for (const policy of policies) {
    const key = keyOf(policy);
    if (options.reinvocation && !context.shouldReinvoke(key)) continue;
    const outcome = policy.evaluate(
      { ...request, object },
      {
        ...(options.params ? { params: options.params(policy, request) } : {}),
        ...(options.namespaceObject !== undefined ? { namespaceObject: options.namespaceObject } : {}),
      },
    );
    if (!outcome.matched) continue;
    if ((policy.mutatingPolicy.failurePolicy ?? 'Fail') === 'Fail') errors.push(...outcome.errors);
    if (outcome.changed) {
      object = outcome.object;
      context.requireReinvokingPreviouslyInvokedPlugins();
      shouldReinvoke = true;
    }
    if (policy.mutatingPolicy.reinvocationPolicy === 'IfNeeded') context.addReinvocablePolicyToPreviouslyInvoked(key);
  }
  context.setLastPolicyInvocationOutput(object);
  if (errors.length)
    return {
      allowed: false,
      object: (request.object ?? null) as KubeObject | null,
      status: { code: 403, reason: 'Invalid', message: errors[0] as string },
      shouldReinvoke: false,
    };
  return { allowed: true, object, shouldReinvoke };
}
