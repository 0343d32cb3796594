// The results of runAdmissionChain, apart so the chain's passes can share them.
import type { AdmissionResult } from '../harness/invoke.ts';
import type { KubeObject } from '../review/schemas.ts';

/** One webhook call in a chain. */
export interface ChainStep {
  webhook: string;
  /** `policy`: a validating policy the API server evaluates itself (before validating webhooks). */
  phase: 'mutating' | 'reinvocation' | 'policy' | 'validating';
  /** `policies` for the native mutating policies' pass (`webhook` then names them), else a webhook call. */
  kind?: 'policies';
  allowed: boolean;
  changed: boolean;
  /** The denial message when the webhook denied under `enforcement: Warn` or `Audit` (and so admitted). */
  wouldDeny?: string;
  result: AdmissionResult;
}

/** The outcome of a request through every matching webhook. */
export interface ChainResult {
  allowed: boolean;
  /** The object as it would be stored. */
  object: KubeObject | null;
  /** Every call, in order. */
  steps: ChainStep[];
  /** Every warning, in order. */
  warnings: string[];
  /** The denials that `Warn` or `Audit` enforcement turned into admissions, in order. */
  wouldDeny: Array<{ webhook: string; message: string }>;
  /** The webhook that denied, and the message as kubectl shows it. */
  deniedBy?: string;
  message?: string;
}
