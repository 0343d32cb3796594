/**
 * The conformance cases the matchConditions environment does not answer as the specification's
 * reference environment does, each with its reason. Two kinds:
 *
 * - EXCLUDED: cases whose premise the Kubernetes environment does not share (listed in docs/cel.md).
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

/** A conversion of a single literal: `uint(-1)`, `timestamp('…')`. */
const FAILING_LITERAL_CONVERSION = /^\s*(u?int|timestamp)\(\s*(-?[\d.e]+|'[^']*'|"[^"]*")\s*\)\s*$/;

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
  {
    reason:
      'int, uint and timestamp conversions of a literal that fail: the API server refuses them when a configuration ' +
      'is created (constant folding, the literal validators), where the specification expects an evaluation error',
    applies: (c) => c.expect.kind === 'error' && FAILING_LITERAL_CONVERSION.test(c.expr),
  },
];

/** The exclusion of a case, if any. */
export function exclusionOf(c: ConformanceCase): Exclusion | undefined {
  return EXCLUDED.find((e) => e.applies(c));
}
