/** MutatingAdmissionPolicy and its binding as the evaluator reads them (admissionregistration.k8s.io/v1). */
import type { BindingCommon, PolicyCommon } from '../generic/types.ts';

/** One mutation of a policy, as MutatingAdmissionPolicy writes it. */
export type Mutation =
  | { patchType: 'ApplyConfiguration'; applyConfiguration: { expression: string } }
  | { patchType: 'JSONPatch'; jsonPatch: { expression: string } };

/** When a policy runs again in the same request: `IfNeeded` after a later plugin changed the object. */
export type ReinvocationPolicy = 'Never' | 'IfNeeded';

/** A MutatingAdmissionPolicy's spec with its name. */
export interface MutatingPolicySpec extends PolicyCommon {
  mutations: Mutation[];
  reinvocationPolicy?: ReinvocationPolicy;
}

/** A MutatingAdmissionPolicyBinding's spec with its name. */
export type MutatingBindingSpec = BindingCommon;
