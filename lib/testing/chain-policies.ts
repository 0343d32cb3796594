/**
 * Mutating policies in the test kit's admission chain: run natively (as the API server's
 * MutatingAdmissionPolicy plugin, before the mutating webhooks) unless the chain is told they
 * are served as webhooks (a cluster without the API), with the plugin's reinvocation.
 */
import { diffPatch } from '../admission/patch.ts';
import type { AdmissionWebhook } from '../admission/webhook.ts';
import type { AdmissionResult } from '../harness/invoke.ts';
import { builtinEquivalents } from '../policies/generic/equivalent.ts';
import { paramSourcesOf } from '../policies/generic/params.ts';
import { kindSchemas, type MutatingPolicyWebhook } from '../policies/mutating/define.ts';
import {
  dispatchMutating,
  type MutatingDispatchEnvironment,
  type MutatingPolicyHook,
  PolicyReinvokeContext,
} from '../policies/mutating/dispatch.ts';
import { compileMutatingPolicy } from '../policies/mutating/evaluate.ts';
import type { AdmissionRequest, KubeObject } from '../review/schemas.ts';
import type { ChainResult, ChainStep } from './chain-types.ts';

/** True for a webhook defined by defineMutatingPolicy. */
export const isMutatingPolicy = (w: AdmissionWebhook): w is MutatingPolicyWebhook => 'mutatingPolicy' in w;

/** The Namespace object of a name, with its name label and the test's labels. */
function namespaceObject(name: string, labels: Record<string, string> = {}): KubeObject {
  return {
    apiVersion: 'v1',
    kind: 'Namespace',
    metadata: { name, labels: { 'kubernetes.io/metadata.name': name, ...labels } },
  } as KubeObject;
}

/** The cluster the native policies see: the request's Namespace, built-in equivalents, the policies' params and schemas. */
function environmentOf(policies: readonly MutatingPolicyWebhook[], namespaceLabels?: Record<string, string>) {
  const schemas = Object.assign({}, ...policies.map((p) => p.mutatingPolicy.schemas));
  const env: MutatingDispatchEnvironment = {
    namespace: (name) => namespaceObject(name, namespaceLabels),
    equivalents: (resource, sub) => builtinEquivalents(resource, sub),
    params: paramSourcesOf(policies.flatMap((p) => p.mutatingPolicy.params)),
    kindSchema: kindSchemas(schemas),
  };
  return env;
}

/** The policies' step: as a webhook call's step, named after the policies that ran. */
export interface PolicyPass {
  name: string;
  allowed: boolean;
  changed: boolean;
  result: AdmissionResult;
  object: KubeObject | null;
}

/** The mutating-policy plugin of one chain: its reinvocation context and its passes. */
export class MutatingPolicyPlugin {
  private context = new PolicyReinvokeContext();
  private readonly hooks: MutatingPolicyHook[];
  private readonly env: MutatingDispatchEnvironment;
  /** True once a pass changed the object (the chain is then run again for reinvocable plugins). */
  changedAny = false;

  constructor(
    private readonly policies: readonly MutatingPolicyWebhook[],
    namespaceLabels?: Record<string, string>,
  ) {
    this.hooks = policies.map((p) => ({
      policy: compileMutatingPolicy(p.mutatingPolicy.spec, {
        ...(p.registration.kubernetesVersion ? { kubernetesVersion: p.registration.kubernetesVersion } : {}),
      }),
      bindings: [p.mutatingPolicy.binding],
    }));
    this.env = environmentOf(policies, namespaceLabels);
  }

  /** The plugin of a chain's matching webhooks (the policies among them unless served as webhooks), and the webhooks the chain calls. */
  static split(
    webhooks: AdmissionWebhook[],
    matching: AdmissionWebhook[],
    policies: 'native' | 'webhook' = 'native',
    namespaceLabels?: Record<string, string>,
  ): { plugin: MutatingPolicyPlugin; matching: AdmissionWebhook[] } {
    if (policies === 'webhook') return { plugin: new MutatingPolicyPlugin([]), matching };
    return {
      plugin: new MutatingPolicyPlugin(webhooks.filter(isMutatingPolicy), namespaceLabels),
      matching: matching.filter((w) => !isMutatingPolicy(w)),
    };
  }

  /** True when the chain has policies to run natively. */
  get active(): boolean {
    return this.policies.length > 0;
  }

  /** Runs the policies on `object` (`reinvocation` for the chain's second run). */
  run(request: AdmissionRequest, object: KubeObject | null, reinvocation: boolean): PolicyPass {
    const outcome = dispatchMutating(this.hooks, { ...request, object }, this.env, {
      context: this.context,
      reinvocation,
    });
    const changed = outcome.allowed && outcome.object !== object;
    if (changed && !reinvocation) this.changedAny = true;
    const patch = changed ? diffPatch(object as object, outcome.object as object) : [];
    const result: AdmissionResult = {
      allowed: outcome.allowed,
      warnings: [],
      patch,
      object: outcome.object,
      review: {
        apiVersion: 'admission.k8s.io/v1',
        kind: 'AdmissionReview',
        response: { uid: request.uid, allowed: outcome.allowed, ...(outcome.status ? { status: outcome.status } : {}) },
      },
    };
    if (outcome.status) result.status = outcome.status;
    const name = this.policies.map((p) => p.mutatingPolicy.spec.name).join(',');
    return { name, allowed: outcome.allowed, changed: patch.length > 0, result, object: outcome.object };
  }

  /** True when the chain's second run is due (a pass or a webhook changed the object) and the chain has policies. */
  reinvoked(webhookChanged: boolean): boolean {
    return this.active && (this.changedAny || webhookChanged);
  }

  /** One pass, recorded as a step; the object after it and, when a policy refused, the chain's outcome. */
  pass(
    request: AdmissionRequest,
    object: KubeObject | null,
    phase: ChainStep['phase'],
    steps: ChainStep[],
  ): { object: KubeObject | null; denied?: ChainResult } {
    const pass = this.run(request, object, phase === 'reinvocation');
    steps.push({
      webhook: pass.name,
      phase,
      kind: 'policies',
      allowed: pass.allowed,
      changed: pass.changed,
      result: pass.result,
    });
    if (pass.allowed) return { object: pass.object };
    const denied: ChainResult = {
      allowed: false,
      object,
      steps,
      warnings: steps.flatMap((s) => s.result.warnings),
      wouldDeny: steps.flatMap((s) =>
        s.wouldDeny === undefined ? [] : [{ webhook: s.webhook, message: s.wouldDeny }],
      ),
      deniedBy: pass.name,
      message: pass.result.status?.message ?? '',
    };
    return { object, denied };
  }

  /**
   * The IfNeeded webhooks a change by the policies' reinvocation invalidates: those invoked after
   * the webhooks' last change (the earlier ones are already to be reinvoked).
   */
  invalidated(
    mutating: readonly AdmissionWebhook[],
    lastChange: number,
    steps: readonly ChainStep[],
  ): AdmissionWebhook[] {
    if (!steps.at(-1)?.changed) return [];
    return mutating.slice(lastChange + 1).filter((w) => w.registration.reinvocationPolicy === 'IfNeeded');
  }
}
