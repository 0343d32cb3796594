/**
 * The CEL environment of matchConditions per Kubernetes minor version, as the API server builds
 * it (apiserver/pkg/cel/environment/base.go): each library from the version that introduced it.
 * The API server compiles an expression of a configuration being created or updated in the "new
 * expressions" environment, that of its compatibility version (one minor version before its
 * own, so that a rollback still reads it), and expressions already stored in the "stored
 * expressions" environment, everything its own version knows.
 */

/** A Kubernetes version (major.minor). */
export interface CelKubeVersion {
  major: number;
  minor: number;
}

/** How an expression is compiled: as a configuration being created, or one already stored. */
export type ExpressionMode = 'create' | 'stored';

/** The newest Kubernetes version whose environment is modelled; the default. */
export const NEWEST_KUBE_VERSION: CelKubeVersion = { major: 1, minor: 34 };

/** A library or syntax the environment gains at a minor version, and the names it brings. */
export interface CelFeature {
  /** The minor version (1.x) from which the API server's environment has it. */
  since: number;
  library: string;
  /** Member functions only this library declares (`x.slice(…)`). */
  members?: string[];
  /** Global functions (`quantity(…)`) and receivers of namespaced ones (`optional.of`). */
  globals?: string[];
  /** Parser syntax it brings (`.?`, `[?]`, the `?` of optional entries). */
  operators?: string[];
}

/** The features of the modelled environment newer than the first matchConditions (1.27). */
export const CEL_FEATURES: CelFeature[] = [
  {
    since: 28,
    library: 'quantity',
    globals: ['quantity', 'isQuantity', 'sign'],
    members: ['isInteger', 'asInteger', 'asApproximateFloat', 'add', 'sub', 'isLessThan', 'isGreaterThan', 'compareTo'],
  },
  {
    since: 28,
    library: 'optional types',
    globals: ['optional', 'optional_type'],
    members: ['hasValue', 'value', 'or', 'orValue', 'optMap', 'optFlatMap'],
    // `?` is an optional entry of a list or map literal: `[?x]`, `{?'k': v}`.
    operators: ['.?', '[?]', '?'],
  },
  { since: 29, library: 'strings version 2', globals: ['strings'], members: ['format', 'join'] },
  { since: 29, library: 'sets', globals: ['sets'] },
  {
    since: 30,
    library: 'ip and cidr',
    globals: ['ip', 'isIP', 'cidr', 'isCIDR', 'net'],
    members: [
      'family',
      'isUnspecified',
      'isLoopback',
      'isLinkLocalMulticast',
      'isLinkLocalUnicast',
      'isGlobalUnicast',
    ].concat(['containsIP', 'containsCIDR', 'masked', 'prefixLength']),
  },
  { since: 31, library: 'format', globals: ['format'], members: ['validate'] },
  {
    since: 32,
    library: 'two-variable comprehensions',
    // `all` and `exists` with two variables are checked by their number of arguments (cel.ts).
    members: ['existsOne', 'transformList', 'transformMap', 'transformMapEntry'],
  },
  // On by default from 1.32 (the AuthorizeWithSelectors feature gate, off by default in 1.31).
  { since: 32, library: 'authorizer selectors', members: ['fieldSelector', 'labelSelector'] },
  { since: 33, library: 'semver', globals: ['semver', 'isSemver'], members: ['major', 'minor', 'patch'] },
  {
    since: 34,
    library: 'lists version 3',
    globals: ['lists'],
    members: ['slice', 'flatten', 'reverse', 'distinct', 'sort', 'sortBy'],
  },
];

/** The minor version whose environment compiles expressions for `version` in `mode`. */
export function environmentMinor(
  version: CelKubeVersion = NEWEST_KUBE_VERSION,
  mode: ExpressionMode = 'stored',
): number {
  // Every Kubernetes release so far is 1.x; a 2.x would know all of 1.x.
  const minor = version.major > 1 ? Number.POSITIVE_INFINITY : version.minor;
  return mode === 'create' ? minor - 1 : minor;
}

/** The feature that `name` (a member, global or operator) needs and `minor` lacks, if any. */
export function missingFeature(
  kind: 'member' | 'global' | 'operator',
  name: string,
  minor: number,
): CelFeature | undefined {
  const key = kind === 'member' ? 'members' : kind === 'global' ? 'globals' : 'operators';
  return CEL_FEATURES.find((f) => f.since > minor && f[key]?.includes(name));
}

/** A version written "1.30" (a registration's `kubernetesVersion`); undefined when unset or not X.Y. */
export function kubeVersionFromText(text: string | undefined): CelKubeVersion | undefined {
  const m = text === undefined ? null : /^(\d+)\.(\d+)$/.exec(text);
  return m ? { major: Number(m[1]), minor: Number(m[2]) } : undefined;
}
