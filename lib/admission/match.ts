import type { AdmissionRegistration } from '../registration.ts';
import type { RuleWithOperations } from '../rule-builder.ts';
import type { AdmissionRequest } from '../review/schemas.ts';

/**
 * Which requests a webhook's rules send it, as the API server decides
 * (k8s.io/apiserver admission/plugin/webhook/predicates/rules): operation, group, version,
 * resource and subresource, and scope. The test kit refuses reviews no rule matches (the
 * API server would never send them); the chain calls only the webhooks a rule sends a request.
 */

/** What a rule is matched against: the parts of an admission request the API server looks at. */
export type RuleAttributes = Pick<AdmissionRequest, 'operation' | 'resource' | 'subResource' | 'namespace'>;

const exactOrWildcard = (list: string[], value: string) => list.includes('*') || list.includes(value);
const quoted = (list: string[]) => `[${list.map((v) => JSON.stringify(v)).join(', ')}]`;

/** `pods/status` → [`pods`, `status`]; `pods` → [`pods`, ``] (Go's SplitN(resource, "/", 2)). */
function splitResource(resource: string): [string, string] {
  const slash = resource.indexOf('/');
  return slash < 0 ? [resource, ''] : [resource.slice(0, slash), resource.slice(slash + 1)];
}

/** Namespaces are cluster-scoped, but their requests carry their own name as the namespace. */
const isNamespaceResource = (r: RuleAttributes['resource']) =>
  r.group === '' && r.version === 'v1' && r.resource === 'namespaces';

/** Why `rule` does not match the request (the first field that differs), or undefined when it matches. */
export function ruleMismatch(rule: RuleWithOperations, request: RuleAttributes): string | undefined {
  const { group, version, resource } = request.resource;
  const sub = request.subResource ?? '';
  if (!rule.operations.includes('*') && !rule.operations.includes(request.operation)) {
    return `operations ${quoted(rule.operations)} do not include ${request.operation}`;
  }
  if (!exactOrWildcard(rule.apiGroups, group)) {
    const hint = group === '' && rule.apiGroups.includes('core') ? ' (the core group is "", not "core")' : '';
    return `apiGroups ${quoted(rule.apiGroups)} do not include ${JSON.stringify(group)}${hint}`;
  }
  if (!exactOrWildcard(rule.apiVersions, version)) {
    return `apiVersions ${quoted(rule.apiVersions)} do not include ${JSON.stringify(version)}`;
  }
  const named = rule.resources.some((r) => {
    const [res, s] = splitResource(r);
    return (res === '*' || res === resource) && (s === '*' || s === sub);
  });
  if (!named) {
    const asked = sub ? `${resource}/${sub}` : resource;
    const lowerCase = rule.resources.some((r) => r.toLowerCase() === asked);
    const hint = lowerCase ? ' (resource names are lower-case plurals)' : '';
    return `resources ${quoted(rule.resources)} do not include ${JSON.stringify(asked)}${hint}`;
  }
  const scope = rule.scope ?? '*';
  const namespaced = !isNamespaceResource(request.resource) && !!request.namespace;
  if (scope === 'Namespaced' && !namespaced) {
    return isNamespaceResource(request.resource)
      ? 'scope Namespaced never matches namespaces, which are cluster-scoped'
      : 'scope Namespaced matches only requests in a namespace, and the review has none (set metadata.namespace)';
  }
  if (scope === 'Cluster' && namespaced) {
    return `scope Cluster does not match a request in namespace ${JSON.stringify(request.namespace)}`;
  }
  return undefined;
}

/** True when the API server's rule matching sends this request to a webhook with this rule. */
export function ruleMatches(rule: RuleWithOperations, request: RuleAttributes): boolean {
  return ruleMismatch(rule, request) === undefined;
}

/** The request as messages name it: `CREATE pods (group "", version v1) in namespace "default"`. */
export function describeRequest(request: RuleAttributes): string {
  const { group, version, resource } = request.resource;
  const what = request.subResource ? `${resource}/${request.subResource}` : resource;
  const where = request.namespace ? ` in namespace ${JSON.stringify(request.namespace)}` : ' without a namespace';
  return `${request.operation} ${what} (group ${JSON.stringify(group)}, version ${version})${where}`;
}

/**
 * Undefined when one of the webhook's rules matches the request; otherwise why none does, rule by
 * rule, naming the webhook, the request's resource and operation, and the fix.
 */
export function unmatchedByRules(reg: AdmissionRegistration, request: RuleAttributes): string | undefined {
  const reasons: string[] = [];
  for (const [i, rule] of reg.rules.entries()) {
    const reason = ruleMismatch(rule, request);
    if (reason === undefined) return undefined;
    reasons.push(`rules[${i}]: ${reason}`);
  }
  return (
    `${reg.name}: the API server never sends this review: ${describeRequest(request)} matches none of its rules ` +
    `(${reasons.length ? reasons.join('; ') : 'it has none'}). Send a review its rules match ` +
    '(admissionReview(object, { operation, resource, namespace })), or pass { matchRules: false } to send it anyway'
  );
}
