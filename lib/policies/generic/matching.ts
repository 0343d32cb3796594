/**
 * Which requests a policy or binding applies to, as the API server decides it
 * (k8s.io/apiserver admission/plugin/policy/matching): the namespace and object selectors, the
 * excluded rules, then the resource rules (with resourceNames), first as the request came, then,
 * under matchPolicy Equivalent, as each equivalent resource; selector errors count only for a
 * request the rules match.
 */
import { ruleMatches } from '../../admission/match.ts';
import { type LabelSelector, selectorMatches } from '../../registration.ts';
import type { AdmissionRequest, KubeObject } from '../../review/schemas.ts';
import type { MatchedAs, MatchResources, NamedRuleWithOperations } from './types.ts';

/** A resource equivalent to the request's (same storage, another version or group) and its kind. */
export interface Equivalent {
  resource: MatchedAs['resource'];
  kind: MatchedAs['kind'];
}

/** What matching needs from the cluster. */
export interface MatchEnvironment {
  /** The Namespace object of a name; undefined when it does not exist. */
  namespace?(name: string): KubeObject | undefined;
  /**
   * The resources equivalent to one (including itself) and their kinds for a subresource: the
   * API server's EquivalentResourceMapper. Without it, no equivalent but the resource itself.
   */
  equivalents?(resource: MatchedAs['resource'], subresource: string): Equivalent[];
}

/** The outcome of matching a request. */
export type MatchResult =
  | { matches: true; as: MatchedAs; error?: undefined }
  | { matches: false; error?: undefined }
  | { matches: false; error: string };

/** The request's own resource and kind. */
function requestAs(request: AdmissionRequest): MatchedAs {
  const r = request.resource;
  const k = request.kind ?? { group: '', version: '', kind: '' };
  return {
    resource: { group: r.group, version: r.version, resource: r.resource },
    kind: { group: k.group ?? '', version: k.version ?? '', kind: k.kind ?? '' },
  };
}

/**
 * Matches a request against one MatchResources. A selector `null` is Go's nil selector, which
 * selects nothing; an absent one (as the API server defaults it) selects everything.
 */
export function matchResources(
  request: AdmissionRequest,
  criteria: Omit<MatchResources, 'namespaceSelector' | 'objectSelector'> & {
    namespaceSelector?: LabelSelector | null;
    objectSelector?: LabelSelector | null;
  },
  env: MatchEnvironment = {},
): MatchResult {
  const ns = matchNamespace(request, criteria.namespaceSelector, env);
  if (!ns.matches && ns.error === undefined) return { matches: false };
  const obj = matchObject(request, criteria.objectSelector);
  if (!obj.matches && obj.error === undefined) return { matches: false };
  const excluded = matchRules(criteria.excludeResourceRules ?? [], criteria.matchPolicy, request, env);
  if (excluded.matches || excluded.error !== undefined) return excluded.error ? excluded : { matches: false };
  const rules = criteria.resourceRules ?? [];
  const found =
    rules.length === 0
      ? { matches: true as const, as: requestAs(request) }
      : matchRules(rules, criteria.matchPolicy, request, env);
  if (!found.matches) return found;
  if (ns.error !== undefined) return { matches: false, error: ns.error };
  if (obj.error !== undefined) return { matches: false, error: obj.error };
  return found;
}

type SelectorResult = { matches: boolean; error?: string };

/** The namespace selector, as the webhook namespace matcher applies it. */
function matchNamespace(
  request: AdmissionRequest,
  selector: LabelSelector | null | undefined,
  env: MatchEnvironment,
): SelectorResult {
  const namespace = request.namespace ?? '';
  // A cluster-scoped resource other than a Namespace is never exempted.
  if (namespace === '' && request.resource.resource !== 'namespaces') return { matches: true };
  if (selector === null) return { matches: false };
  const invalid = selectorError(selector);
  if (invalid) return { matches: false, error: `Internal error occurred: ${invalid}` };
  if (!selector || isEmptySelector(selector)) return { matches: true };
  let labels: Record<string, string> | undefined;
  const op = request.operation;
  if (request.resource.resource === 'namespaces' && !request.subResource && (op === 'CREATE' || op === 'UPDATE')) {
    labels = (request.object as KubeObject | undefined)?.metadata?.labels ?? {};
  } else {
    const found = env.namespace?.(namespace);
    if (!found) return { matches: false, error: `namespaces "${namespace}" not found` };
    labels = found.metadata?.labels ?? {};
  }
  return { matches: selectorMatches(selector, labels) };
}

/** The object selector: the object's or the old object's labels. */
function matchObject(request: AdmissionRequest, selector: LabelSelector | null | undefined): SelectorResult {
  if (selector === null) return { matches: false };
  const invalid = selectorError(selector);
  if (invalid) return { matches: false, error: `Internal error occurred: ${invalid}` };
  if (!selector || isEmptySelector(selector)) return { matches: true };
  const labelsOf = (o: unknown) =>
    o && typeof o === 'object' ? ((o as KubeObject).metadata?.labels ?? {}) : undefined;
  const now = labelsOf(request.object);
  const old = labelsOf(request.oldObject);
  return {
    matches:
      (now !== undefined && selectorMatches(selector, now)) || (old !== undefined && selectorMatches(selector, old)),
  };
}

function isEmptySelector(selector: LabelSelector): boolean {
  return !Object.keys(selector.matchLabels ?? {}).length && !(selector.matchExpressions ?? []).length;
}

/** A valid label value: empty, or at most 63 alphanumerics, `-`, `_`, `.`, starting and ending alphanumeric. */
const LABEL_VALUE = /^(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?$/;

/** Why metav1.LabelSelectorAsSelector refuses a selector, or undefined. */
export function selectorError(selector: LabelSelector | null | undefined): string | undefined {
  if (!selector) return undefined;
  const checkValue = (path: string, value: string) =>
    value.length > 63 || !LABEL_VALUE.test(value)
      ? `${path}: Invalid value: ${JSON.stringify(value)}: a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyValue',  or 'my_value',  or '12345', regex used for validation is '(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?')`
      : undefined;
  for (const [key, value] of Object.entries(selector.matchLabels ?? {})) {
    const bad = checkValue(`values[0][${key}]`, value);
    if (bad) return bad;
  }
  for (const { key, operator, values = [] } of selector.matchExpressions ?? []) {
    if (operator === 'In' || operator === 'NotIn') {
      if (!values.length)
        return "values: Invalid value: []string{}: for 'in', 'notin' operators, values set can't be empty";
      for (const [i, v] of values.entries()) {
        const bad = checkValue(`values[${i}][${key}]`, v);
        if (bad) return bad;
      }
    } else if (operator === 'Exists' || operator === 'DoesNotExist') {
      if (values.length)
        return 'values: Invalid value: []string{...}: values set must be empty for exists and does not exist';
    } else return `${JSON.stringify(operator)} is not a valid label selector operator`;
  }
  return undefined;
}

/** One rule matched against a resource, and its names against the request's name. */
function ruleHits(rule: NamedRuleWithOperations, request: AdmissionRequest, resource: MatchedAs['resource']): boolean {
  const attrs = {
    operation: request.operation,
    resource,
    subResource: request.subResource,
    namespace: request.namespace,
  };
  if (!ruleMatches(rule, attrs)) return false;
  const names = rule.resourceNames ?? [];
  return names.length === 0 || names.includes(request.name ?? '');
}

/** The API server's matchesResourceRules: as requested first, then (Equivalent) as each equivalent. */
function matchRules(
  rules: NamedRuleWithOperations[],
  matchPolicy: MatchResources['matchPolicy'],
  request: AdmissionRequest,
  env: MatchEnvironment,
): MatchResult {
  const own = requestAs(request);
  for (const rule of rules) if (ruleHits(rule, request, own.resource)) return { matches: true, as: own };
  // Unset is Exact here; the API's defaulting (and defineValidatingPolicy) makes it Equivalent.
  if (matchPolicy !== 'Equivalent') return { matches: false };
  const equivalents = env.equivalents?.(own.resource, request.subResource ?? '') ?? [];
  const same = (a: MatchedAs['resource'], b: MatchedAs['resource']) =>
    a.group === b.group && a.version === b.version && a.resource === b.resource;
  for (const rule of rules) {
    for (const equivalent of equivalents) {
      if (same(equivalent.resource, own.resource)) continue;
      if (!ruleMatches(rule, { ...request, resource: equivalent.resource })) continue;
      const { kind } = equivalent;
      if (!kind.kind && !kind.group && !kind.version) {
        const r = equivalent.resource;
        return {
          matches: false,
          error: `unable to convert to ${r.group}/${r.version}, Resource=${r.resource}: unknown kind`,
        };
      }
      const names = rule.resourceNames ?? [];
      if (names.length === 0 || names.includes(request.name ?? ''))
        return { matches: true, as: { resource: { ...equivalent.resource }, kind: { ...kind } } };
    }
  }
  return { matches: false };
}
