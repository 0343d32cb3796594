/**
 * Conformance cases the matchConditions environment still answers differently from the CEL
 * specification, with what it does instead: differences to fix, not exclusions. The conformance test
 * fails when one of them passes, so that it is taken off this list.
 */
export const KNOWN_DIFFERENCES: Record<string, string> = {};
