import type { KubeObject } from '../review/schemas.ts';

// Stand-ins for wildcards and missing names: any concrete value is one the webhook must answer.
/** The group a `*` rule or a CRD without a dot stands for. */
export const ANY_GROUP = 'example.com';
/** The version a `*` rule or a conversion without versions stands for. */
export const ANY_VERSION = 'v1';

/**
 * One check of the conformance suite: a name for the report and the assertion to run. `run`
 * resolves to a reason when the check could not be made with a generated object (a sample is
 * needed), and rejects with an AssertionError when the webhook fails it.
 */
export interface ConformanceCheck {
  name: string;
  // biome-ignore lint/suspicious/noConfusingVoidType: a check that passes returns nothing.
  run: () => Promise<void | { skipped: string }>;
}

/** How to give a function a sample of one's own, for the end of every conformance message. */
export function sampleHint(name: string): string {
  return (
    'to send an object of your own instead of the generated one: ' +
    `describeConformance({ samples: { ${JSON.stringify(name)}: { apiVersion, kind, metadata, ... } } }), ` +
    'or expectConformance(webhook, { sample })'
  );
}

/** Options of the conformance checks. */
export interface ConformanceOptions {
  /** Project folder that `crdManifest` paths are relative to; default the working directory. */
  root?: string;
  /**
   * An object to send instead of the generated one (`apiVersion`, `kind`, `metadata` only),
   * for functions that need more to say anything.
   */
  sample?: KubeObject;
  /**
   * CustomResourceDefinitions (parsed manifests) whose schemas objects of their resources are
   * generated from; describeConformance passes those of the project's conversion functions.
   */
  crds?: unknown[];
}
