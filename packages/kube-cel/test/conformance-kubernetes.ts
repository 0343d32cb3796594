/**
 * Conformance cases Kubernetes answers otherwise than the CEL specification, with Kubernetes'
 * answer: the environment must give exactly that answer (conformance.test.ts checks it).
 *
 * `string.format` comes from cel-go's strings extension at version 2 in the API server
 * (k8s.io/apiserver's base environment, through 1.34), whose formatter is the one before version 4:
 * `%f` and `%e` print through golang.org/x/text's en-US printer (`∞`, `NaN`, `× 10⁰³`), `%e` reads
 * its precision as a width (`%6e`, so NaN is padded to six runes), `%d` refuses doubles, and `%s`
 * prints a double as Go's strconv does (`+Inf`); its validator checks a literal call when compiling. The specification's answers are those of version 4.
 *
 * A field selected, in an optional chain, on a value that is neither a map nor a message (`null`, `0`)
 * is absent for cel-go's attribute resolution, so the chain is `optional.none()`; the specification's
 * answer, `no such key`, is that of cel.EnableErrorOnBadPresenceTest, which the API server does not set.
 */
import type { Outcome } from './conformance-suite.ts';

/** `%d` of a double: the format validator refuses it when the expression is compiled (Kubernetes 1.29+). */
const refusesDouble: Outcome = {
  error: 'error during formatting: decimal clause can only be used on integers, was given double',
  stage: 'compile',
};

/** Conformance path → the outcome Kubernetes' cel-go gives. */
export const KUBERNETES_ANSWERS: Record<string, Outcome> = {
  'string_ext/format/scientific notation formatting clause': { value: '"1.052033\u202f×\u202f10⁰³"' },
  'string_ext/format/scientific notation formatting clause in a string variable': {
    value: '"1.052033\u202f×\u202f10⁰³"',
  },
  'string_ext/format/default precision for scientific notation': { value: '"2.718280\u202f×\u202f10⁰⁰"' },
  'string_ext/format/dyntype support for scientific notation': { value: '"2.718280\u202f×\u202f10⁰⁰"' },
  'string_ext/format/NaN support for scientific notation': { value: '"   NaN"' },
  'string_ext/format/positive infinity support for scientific notation': { value: '"     ∞"' },
  'string_ext/format/negative infinity support for scientific notation': { value: '"    -∞"' },
  'string_ext/format/positive infinity support for fixed-point': { value: '"∞"' },
  'string_ext/format/negative infinity support for fixed-point': { value: '"-∞"' },
  'string_ext/format/NaN support for decimal': refusesDouble,
  'string_ext/format/positive infinity support for decimal': refusesDouble,
  'string_ext/format/negative infinity support for decimal': refusesDouble,
  'string_ext/format/dyntype NaN/infinity support': { value: '"[\\"NaN\\", \\"+Inf\\", \\"-Inf\\"]"' },
  'optionals/optionals/map_null_entry_no_such_key': { value: 'false' },
  // cel-go builds a map literal as a Go map of values: a key given again replaces the earlier entry.
  'fields/qualified_identifier_resolution/map_value_repeat_key': { value: 'i3' },
  'optionals/optionals/map_present_key_invalid_field': { value: 'false' },
  // The strings extension Kubernetes pins searches from the last code point, which an empty string
  // lacks: `''.lastIndexOf('@@')` is `index out of range: -1` there (later cel-go answers -1).
  'string_ext/last_index_of/empty_string': { error: 'index out of range: -1', stage: 'eval' },
};
