/**
 * What names an expression that needs the Kubernetes libraries: their functions (and the standard
 * ones whose overloads they add to or replace, such as `matches` in RE2) and their namespaces. An
 * expression naming none of them compiles in the environment without the libraries, built in a
 * fraction of the time (environment.ts); a test holds these lists to what the libraries register.
 */

/** The functions the libraries register or add overloads to. */
export const LIBRARY_FUNCTIONS: ReadonlySet<string> = new Set(
  (
    'add asApproximateFloat asInteger byte charAt cidr compareTo contains containsCIDR containsIP date datetime ' +
    'distinct dns1035Label dns1035LabelPrefix dns1123Label dns1123LabelPrefix dns1123Subdomain ' +
    'dns1123SubdomainPrefix equivalent family find findAll flatten format getEscapedPath getHost getHostname ' +
    'getPort getQuery getScheme indexOf intersects ip isCIDR isCanonical isGlobalUnicast isGreaterThan isIP ' +
    'isInteger isLessThan isLinkLocalMulticast isLinkLocalUnicast isLoopback isQuantity isSemver isSorted isURL ' +
    'isUnspecified join labelValue lastIndexOf lowerAscii major masked matches max min minor named patch ' +
    'prefixLength qualifiedName quantity quote range replace reverse semver sign slice sort split string sub ' +
    'substring sum trim type upperAscii uri url uuid validate'
  ).split(' '),
);

/** The namespaces the libraries declare (`sets.contains`, `strings.quote`, `net.IP`). */
export const LIBRARY_NAMESPACES: ReadonlySet<string> = new Set(['strings', 'sets', 'ip', 'net', 'format', 'lists']);

/**
 * The functions to which the libraries add only overloads of their own types (`string(ip)`,
 * `type(quantity)`): a call needs them only where a value of those types can come from, a library
 * function (named in the expression, which then needs them anyway), a policy's `variables` (computed
 * by other expressions) or a type name of the `kubernetes` namespace. Every environment has the
 * other overloads (`string(…)` of the standard types: string-conversions.ts).
 */
export const VALUE_TYPED_FUNCTIONS: ReadonlySet<string> = new Set(['string', 'type']);

/**
 * True when an expression may need the libraries: it calls one of their functions or names one of
 * their namespaces (VALUE_TYPED_FUNCTIONS only where it can hold a value of their types). A name in
 * a string literal or a comment counts too, which only builds the full environment for nothing.
 */
export function needsLibraries(expression: string): boolean {
  let valueTyped = false;
  for (const m of expression.matchAll(/(\.?)\s*([A-Za-z_]\w*)(?=\s*([(.]?))/g)) {
    const [, dot, name, next] = m;
    if (next === '(' && VALUE_TYPED_FUNCTIONS.has(name!)) valueTyped = true;
    else if (next === '(' && LIBRARY_FUNCTIONS.has(name!)) return true;
    if (next === '.' && !dot && LIBRARY_NAMESPACES.has(name!)) return true;
  }
  return valueTyped && /\b(?:variables|kubernetes)\b/.test(expression);
}
