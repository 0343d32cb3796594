/**
 * The conformance cases the matchConditions environment does not answer as the specification's
 * reference environment does, each with its reason. Two kinds:
 *
 * - EXCLUDED: cases whose premise the Kubernetes environment does not share (listed in the README).
 * - KNOWN: differences of the engine still to be fixed; the conformance test fails when one of them
 *   starts passing, so the list only shrinks.
 */
import type { ConformanceCase } from './conformance-suite.ts';

/** A reason a case is excluded, with the rule that finds its cases. */
export interface Exclusion {
  reason: string;
  applies(c: ConformanceCase): boolean;
}

const MESSAGE_LITERAL = /(^|[^\w.])([A-Z]\w*|google\.protobuf\.\w+|\.?[a-z_]+(\.[a-z_\d]+)+\.[A-Z]\w*)\s*\{/;

/** Cases excluded by design, in the order they are tried. */
export const EXCLUDED: Exclusion[] = [
  {
    reason:
      'protobuf messages (TestAllTypes, wrappers, Struct, Any, message literals, proto containers): matchConditions ' +
      'variables are JSON objects and the API server declares no message type a condition could build or receive',
    applies: (c) =>
      c.container !== '' ||
      /TestAllTypes|google\.protobuf\.|proto[23]/.test(c.expr) ||
      MESSAGE_LITERAL.test(c.expr) ||
      Object.values(c.bindings).some((v) => 'objectValue' in v) ||
      c.declarations.some((d) => JSON.stringify(d.type).includes('messageType') || 'wrapper' in d.type),
  },
];

/** The exclusion of a case, if any. */
export function exclusionOf(c: ConformanceCase): Exclusion | undefined {
  return EXCLUDED.find((e) => e.applies(c));
}
