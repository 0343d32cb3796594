// What the audit reads: the resources discovery lists, and which of them a registration's rules select.
import type { AdmissionRegistration, LabelSelector, RuleWithOperations } from '../../lib/internal.ts';
import { KubeApiError, type KubeClient } from './kubeapi.ts';
import { isRecord } from '../json.ts';

/** A listable resource from discovery. */
export interface ApiResource {
  group: string;
  version: string;
  name: string;
  kind: string;
  namespaced: boolean;
}

/** A resource one webhook's rules send reviews for, and the operation the audit sends. */
export interface Target {
  resource: ApiResource;
  operation: 'UPDATE' | 'CREATE';
}

/** Discovery, fetched lazily and once per audit. */
export class Discovery {
  private groups?: Array<{ name: string; versions: string[] }>;
  private readonly resources = new Map<string, Promise<ApiResource[]>>();

  constructor(
    private readonly client: KubeClient,
    private readonly problems: string[],
  ) {}

  /** Every API group with its versions, the preferred version first; the core group is "". */
  async allGroups(): Promise<Array<{ name: string; versions: string[] }>> {
    if (!this.groups) {
      // Discovery answers as parsed: each member is checked where it is read.
      const core = (await this.client.request('GET', '/api')) as { versions?: unknown };
      const list = (await this.client.request('GET', '/apis')) as { groups?: unknown };
      this.groups = [{ name: '', versions: Array.isArray(core.versions) ? core.versions : ['v1'] }];
      for (const g of Array.isArray(list.groups) ? list.groups : []) {
        const group = g as {
          name?: unknown;
          versions?: Array<{ version?: unknown }>;
          preferredVersion?: { version?: string };
        };
        const versions: string[] = (group.versions ?? []).map((v) => String(v.version));
        const preferred = group.preferredVersion?.version;
        if (preferred && versions.includes(preferred))
          versions.sort((a, b) => Number(b === preferred) - Number(a === preferred));
        this.groups.push({ name: String(group.name), versions });
      }
    }
    return this.groups;
  }

  /** The listable (non-subresource) resources of one group version. */
  resourcesOf(group: string, version: string): Promise<ApiResource[]> {
    const key = `${group}/${version}`;
    let found = this.resources.get(key);
    if (!found) {
      found = this.client.request('GET', group ? `/apis/${group}/${version}` : `/api/${version}`).then(
        (list: unknown) => {
          const listed = (list as { resources?: unknown }).resources;
          const resources: unknown[] = Array.isArray(listed) ? listed : [];
          return resources
            .filter(isRecord)
            .flatMap((r) =>
              typeof r.name === 'string' && !r.name.includes('/') && Array.isArray(r.verbs) && r.verbs.includes('list')
                ? [{ group, version, name: r.name, kind: String(r.kind), namespaced: r.namespaced === true }]
                : [],
            );
        },
        (err: unknown) => {
          // As kubectl does, a group version that cannot be discovered (an aggregated API that is down) is reported and skipped.
          if (!(err instanceof KubeApiError)) throw err;
          this.problems.push(`discovery of ${key || 'v1'}: ${err.message}`);
          return [];
        },
      );
      this.resources.set(key, found);
    }
    return found;
  }
}

const anyOf = (list: string[], value: string) => list.includes('*') || list.includes(value);

/** The audit's operation for a rule: UPDATE when the rule covers updates, CREATE when it only covers creation, none otherwise. */
function operationFor(rule: RuleWithOperations): Target['operation'] | undefined {
  if (anyOf(rule.operations, 'UPDATE')) return 'UPDATE';
  if (rule.operations.includes('CREATE')) return 'CREATE';
  return undefined;
}

/**
 * The resources a webhook's rules match, from discovery: each group and resource once, in the
 * first version the rules match (the preferred one when they match it), with UPDATE when any
 * matching rule covers updates. Subresource rules are not audited (no objects to list).
 */
export async function targetsOf(reg: AdmissionRegistration, discovery: Discovery): Promise<Target[]> {
  const targets = new Map<string, Target>();
  for (const rule of reg.rules) {
    const operation = operationFor(rule);
    if (!operation) continue;
    for (const group of await discovery.allGroups()) {
      if (!anyOf(rule.apiGroups, group.name)) continue;
      for (const version of group.versions) {
        if (!anyOf(rule.apiVersions, version)) continue;
        for (const resource of await discovery.resourcesOf(group.name, version)) {
          const named =
            rule.resources.includes('*') || rule.resources.includes('*/*') || rule.resources.includes(resource.name);
          const scope = rule.scope ?? '*';
          const scoped = scope === '*' || (scope === 'Namespaced') === resource.namespaced;
          if (!named || !scoped) continue;
          const key = `${group.name}/${resource.name}`;
          const existing = targets.get(key);
          if (!existing) targets.set(key, { resource, operation });
          else if (operation === 'UPDATE') existing.operation = 'UPDATE';
        }
      }
    }
  }
  return [...targets.values()];
}

/** A label selector as a `labelSelector` query string, so the API server filters before paging. */
export function selectorQuery(selector: LabelSelector | undefined): string {
  const parts: string[] = [];
  for (const [key, value] of Object.entries(selector?.matchLabels ?? {})) parts.push(`${key}=${value}`);
  for (const { key, operator, values = [] } of selector?.matchExpressions ?? []) {
    if (operator === 'In') parts.push(`${key} in (${values.join(',')})`);
    else if (operator === 'NotIn') parts.push(`${key} notin (${values.join(',')})`);
    else if (operator === 'Exists') parts.push(key);
    else parts.push(`!${key}`);
  }
  return parts.join(',');
}

export function collectionPath(resource: ApiResource): string {
  return resource.group
    ? `/apis/${resource.group}/${resource.version}/${resource.name}`
    : `/api/${resource.version}/${resource.name}`;
}
