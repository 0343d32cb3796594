/**
 * Equivalent resources of the built-in API, from the resource table: the versions of the same
 * resource in its group, and the groups that share a storage (the API server's
 * EquivalentResourceMapper). For the test kit and the emulator, which play the API server; a
 * function served as a webhook gets requests the API server has already matched.
 */
import { builtinResources, LAST_TABLE_MINOR, tableMinor } from '../../k8s/resources.ts';
import type { Equivalent } from './matching.ts';
import type { MatchedAs } from './types.ts';

/** Groups whose resource of a name shares the storage of another group's (moved out of extensions). */
const SHARED_STORAGE: Record<string, readonly string[]> = {
  deployments: ['apps', 'extensions'],
  daemonsets: ['apps', 'extensions'],
  replicasets: ['apps', 'extensions'],
  networkpolicies: ['networking.k8s.io', 'extensions'],
  ingresses: ['networking.k8s.io', 'extensions'],
  podsecuritypolicies: ['policy', 'extensions'],
  events: ['', 'events.k8s.io'],
};

/** The kind of a subresource: `scale` is autoscaling/v1 Scale from apps/v1 and the core group. */
function subresourceKind(resource: MatchedAs['resource'], kind: string, subresource: string): MatchedAs['kind'] {
  if (subresource === 'scale') {
    if (resource.group === 'apps' && resource.version === 'v1')
      return { group: 'autoscaling', version: 'v1', kind: 'Scale' };
    if (resource.group === '') return { group: 'autoscaling', version: 'v1', kind: 'Scale' };
    return { group: resource.group, version: resource.version, kind: 'Scale' };
  }
  return { group: resource.group, version: resource.version, kind };
}

/**
 * The resources equivalent to `resource` (itself included) served by Kubernetes `minor`, with
 * their kinds for `subresource`; a resource the table does not know has none but itself.
 */
export function builtinEquivalents(
  resource: MatchedAs['resource'],
  subresource: string,
  minor: number = LAST_TABLE_MINOR,
): Equivalent[] {
  const at = tableMinor(minor);
  const groups = SHARED_STORAGE[resource.resource]?.includes(resource.group)
    ? SHARED_STORAGE[resource.resource]!
    : [resource.group];
  const out: Equivalent[] = [];
  for (const r of builtinResources()) {
    if (r.resource !== resource.resource || !groups.includes(r.group) || !r.minors.has(at)) continue;
    if ((r.subresource ?? '') !== subresource) continue;
    const gvr = { group: r.group, version: r.version, resource: r.resource };
    out.push({ resource: gvr, kind: subresourceKind(gvr, r.kind, subresource) });
  }
  return out;
}
