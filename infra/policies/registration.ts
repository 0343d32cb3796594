/**
 * Policies as registrations: a function whose default export is a validating or mutating policy
 * registers, beside its webhook, the policy's native objects (as admissionregistration v1 data).
 * Read where the module is loaded, so manifests, lint, deploy, the emulator and the audit all take
 * the policy from the same registration.
 */
import { type DefinedMutatingPolicy, mutatingPolicyManifests, type Registration } from '../../lib/internal.ts';
import type { DefinedValidatingPolicy } from '../../lib/policies/index.ts';
import { KlwError } from '../errors.ts';

/** How a policy may be served: native where the cluster can (`auto`), always natively, or always from Lambda. */
export type ServeMode = 'auto' | 'native' | 'webhook';

/** A policy object or its binding, as JSON. */
export interface PolicyObject {
  apiVersion: string;
  kind: string;
  metadata: { name: string; labels?: Record<string, string> };
  spec: Record<string, unknown>;
}

/** What a policy registers: its kind, how it may be served, and its objects in admissionregistration v1. */
export interface PolicyRegistration {
  kind: 'ValidatingAdmissionPolicy' | 'MutatingAdmissionPolicy';
  serve: ServeMode;
  policy: PolicyObject;
  binding: PolicyObject;
}

/** A registration that may carry a policy (what the loader answers for a policy function). */
export type PolicyAwareRegistration = Registration & { policy?: PolicyRegistration };

const SERVE_MODES: readonly ServeMode[] = ['auto', 'native', 'webhook'];

/** A copy without undefined members nor type-only markers, as JSON writes it. */
function plain<T>(value: T): T {
  return JSON.parse(JSON.stringify(value)) as T;
}

/** The policy a loaded module's default export declares, or undefined for a plain webhook. */
export function policyRegistrationOf(webhook: object, file: string): PolicyRegistration | undefined {
  const validating = (webhook as { validatingPolicy?: DefinedValidatingPolicy }).validatingPolicy;
  const mutating = (webhook as { mutatingPolicy?: DefinedMutatingPolicy }).mutatingPolicy;
  if (!validating && !mutating) return undefined;
  const serve = (validating?.serve ?? mutating?.serve ?? 'auto') as ServeMode;
  if (!SERVE_MODES.includes(serve))
    throw new KlwError(
      `${file}: serve is ${JSON.stringify(serve)}; write serve: 'auto' (native where the cluster can), 'native' or 'webhook'`,
    );
  if (validating) {
    const { name, ...spec } = validating.spec;
    const { name: bindingName, ...bindingSpec } = validating.binding;
    const apiVersion = 'admissionregistration.k8s.io/v1';
    return {
      kind: 'ValidatingAdmissionPolicy',
      serve,
      policy: plain({ apiVersion, kind: 'ValidatingAdmissionPolicy', metadata: { name }, spec }),
      binding: plain({
        apiVersion,
        kind: 'ValidatingAdmissionPolicyBinding',
        metadata: { name: bindingName },
        spec: bindingSpec,
      }),
    };
  }
  const [policy, binding] = mutatingPolicyManifests(mutating!, 'v1');
  return {
    kind: 'MutatingAdmissionPolicy',
    serve,
    policy: plain(policy) as unknown as PolicyObject,
    binding: plain(binding) as unknown as PolicyObject,
  };
}

/** The policy a registration carries, if any. */
export function policyOf(registration: Registration): PolicyRegistration | undefined {
  return (registration as PolicyAwareRegistration).policy;
}
