// One webhook rule checked against the resources it names (see rules.ts): its groups, versions,
// resources, subresources, scope and operations.
import { type BuiltinResource, describeMinors, LAST_TABLE_MINOR, type Operation } from '../../lib/internal.ts';
import type { Finding } from './finding.ts';

/** What a rule can match: a built-in resource or a shipped CRD's, in the same shape. */
export type Candidate = Omit<BuiltinResource, 'minors'> & { minors?: ReadonlySet<number>; crd?: string };

const ALL_OPERATIONS: Operation[] = ['CREATE', 'UPDATE', 'DELETE', 'CONNECT'];

/** True for an array of strings. */
export function isStringList(value: unknown): value is string[] {
  return Array.isArray(value) && value.every((v) => typeof v === 'string');
}

/** Names of a candidate a user may write by mistake for its plural: kind, singular, any case. */
function looksLike(written: string, c: Candidate, singular?: string): boolean {
  const w = written.toLowerCase();
  return (
    w === c.resource ||
    w === c.kind.toLowerCase() ||
    w === singular ||
    `${w}s` === c.resource ||
    `${w}es` === c.resource ||
    w.replace(/y$/, 'ies') === c.resource
  );
}

/** Values quoted as JSON, once each, comma-separated. */
export function quoted(values: Iterable<string>): string {
  return [...new Set(values)].map((v) => JSON.stringify(v)).join(', ');
}

/** What checking a webhook's rules adds findings to, and the resources it checks them against. */
interface Context {
  add: (level: Finding['level'], rule: string, message: string) => void;
  builtin: ReadonlyMap<string, Candidate[]>;
  crds: ReadonlyMap<string, Candidate[]>;
  singulars: ReadonlyMap<string, string>;
}

/** What checking a rule's groups and resources found, for the check of its operations. */
interface RuleScan {
  /** Operations that never happen on a resource are an error only when nothing of the rule matches. */
  known: Array<{ written: string; takes: ReadonlySet<Operation>; connectSubs: string[] }>;
  /** Set when something the rule names may match: a wildcard, a group this check does not know. */
  open: boolean;
  /** Set when one of the rule's operations happens on something it names. */
  matches: boolean;
}

/** One rule being checked: where it is, what it names, and what was found so far. */
interface RuleCheck {
  at: string;
  ctx: Context;
  scan: RuleScan;
  apiVersions: string[];
  resources: string[];
  ops: Operation[];
  scope: string;
}

/** One group of a rule being checked: its resources as the group serves them. */
interface GroupCheck extends RuleCheck {
  group: string;
  own: Candidate[];
  /** Where the group's resources come from, for messages. */
  source: string;
  groupName: string;
  atGroup: (v: string) => string;
  versions: string[];
}

/** Checks one rule of a webhook. */
export function checkRule(rule: Record<string, unknown>, at: string, ctx: Context): void {
  const { apiGroups, apiVersions, resources, operations } = rule;
  if (!isStringList(apiGroups) || !isStringList(apiVersions) || !isStringList(resources) || !isStringList(operations))
    return;
  const scope = typeof rule.scope === 'string' ? rule.scope : '*';
  const ops = operations.includes('*')
    ? ALL_OPERATIONS
    : (operations.filter((o) => ALL_OPERATIONS.includes(o as Operation)) as Operation[]);
  const scan: RuleScan = { known: [], open: false, matches: false };
  for (const group of apiGroups) checkGroup(group, { at, ctx, scan, apiVersions, resources, ops, scope });
  if (operations.includes('*')) return;
  checkOperations(at, ops, scan, ctx);
}

/** Checks a rule's API group, then the versions and resources it names in it. */
function checkGroup(group: string, r: RuleCheck): void {
  const { at, ctx, scan, apiVersions, resources } = r;
  if (group === '*') {
    scan.open = true;
    return;
  }
  if (group === 'core' || group === 'v1') {
    ctx.add(
      'error',
      'rule-group',
      `${at}.apiGroups: ${JSON.stringify(group)} is no API group; ` +
        'the core group (pods, services, configmaps) is "": apiGroups: [""]',
    );
    return;
  }
  if (group.includes('/')) {
    const [g, v] = group.split('/');
    ctx.add(
      'error',
      'rule-group',
      `${at}.apiGroups: ${JSON.stringify(group)} is a group and version; ` +
        `write apiGroups: [${JSON.stringify(g)}], apiVersions: [${JSON.stringify(v)}]`,
    );
    return;
  }
  const own = ctx.crds.get(group) ?? ctx.builtin.get(group);
  if (!own) {
    const lower = group.toLowerCase();
    if (lower !== group && (ctx.crds.has(lower) || ctx.builtin.has(lower)))
      ctx.add(
        'error',
        'rule-group',
        `${at}.apiGroups: ${JSON.stringify(group)}: API groups are lower-case; ` +
          `did you mean ${JSON.stringify(lower)}?`,
      );
    else scan.open = true;
    return; // a CRD installed by other means
  }
  const source = ctx.crds.has(group) ? `the CRD ${quoted(own.map((c) => c.crd!))}` : `Kubernetes 1.${LAST_TABLE_MINOR}`;
  const groupName = group === '' ? 'the core group ""' : `group ${JSON.stringify(group)}`;
  const atGroup = (v: string) => (group ? `${group}/${v}` : v);
  const groupVersions = new Set(own.map((c) => c.version));
  const versions = apiVersions.includes('*') ? [...groupVersions] : apiVersions;
  for (const v of versions) {
    if (!groupVersions.has(v))
      ctx.add(
        'error',
        'rule-version',
        `${at}.apiVersions: ${groupName} serves no version ${JSON.stringify(v)}; it serves ${quoted(groupVersions)}`,
      );
  }
  const g: GroupCheck = { ...r, group, own, source, groupName, atGroup, versions };
  for (const written of resources) checkResource(written, g);
}

/** Checks one resource a rule names in a group it knows: that it exists, is served, and takes the rule's scope. */
function checkResource(written: string, g: GroupCheck): void {
  const { at, ctx, scan, ops, scope, group, own, source, groupName, atGroup, versions } = g;
  const [name = '', sub] = written.split('/');
  if (name === '*') {
    scan.open = true;
    return;
  }
  const main = own.filter((c) => c.resource === name && !c.subresource);
  if (!main.length) {
    const alike = own.find((c) => !c.subresource && looksLike(name, c, ctx.singulars.get(`${c.group}/${c.resource}`)));
    const elsewhere =
      !alike && [...ctx.builtin.values()].flat().find((c) => !c.subresource && c.resource === name.toLowerCase());
    const hint = alike
      ? `; did you mean ${JSON.stringify(sub ? `${alike.resource}/${sub}` : alike.resource)}? ` +
        '(resources are plural and lower-case)'
      : elsewhere
        ? `; ${JSON.stringify(elsewhere.resource)} is in group ${JSON.stringify(elsewhere.group)}`
        : '';
    ctx.add(
      'error',
      'rule-resource',
      `${at}.resources: ${groupName} has no resource ${JSON.stringify(name)} (checked against ${source})${hint}`,
    );
    return;
  }
  const served = main.filter((c) => versions.includes(c.version));
  if (!served.length) {
    ctx.add(
      'error',
      'rule-version',
      `${at}: ${JSON.stringify(name)} is not served at ${quoted(versions.map(atGroup))}; ` +
        `it is at ${quoted(main.map((c) => atGroup(c.version)))}`,
    );
    return;
  }
  const targets = subresourceTargets(written, name, sub, served, g);
  if (!targets) return;
  if (!ctx.crds.has(group)) warnRemoved(written, main, targets, g);
  const takes = new Set(targets.flatMap((c) => c.operations));
  if (ops.some((o) => takes.has(o))) scan.matches = true;
  const connectSubs = [
    ...new Set(
      own.filter((c) => c.resource === name && c.operations.includes('CONNECT')).map((c) => `${name}/${c.subresource}`),
    ),
  ];
  scan.known.push({ written, takes, connectSubs });
  const isNamespaced = targets.some((c) => c.namespaced);
  if ((scope === 'Namespaced' && !isNamespaced) || (scope === 'Cluster' && isNamespaced)) {
    ctx.add(
      'error',
      'rule-scope',
      `${at}.scope: ${scope} never matches ${written}, ` +
        `which is ${isNamespaced ? 'namespaced' : 'cluster-scoped'}; ` +
        `scope: ${isNamespaced ? 'Namespaced' : 'Cluster'} (or "*")`,
    );
  }
}

/** What `name/sub` names at the rule's versions (the served main resource without a subresource); undefined, reported, when the subresource does not exist. */
function subresourceTargets(
  written: string,
  name: string,
  sub: string | undefined,
  served: Candidate[],
  g: GroupCheck,
): Candidate[] | undefined {
  const { at, ctx, own, versions } = g;
  let targets: Candidate[] = served;
  if (sub !== undefined && sub !== '*') {
    targets = own.filter((c) => c.resource === name && c.subresource === sub && versions.includes(c.version));
    if (!targets.length) {
      const subs = [
        ...new Set(own.filter((c) => c.resource === name && c.subresource).map((c) => c.subresource!)),
      ].sort();
      const alike = subs.find((s) => s === sub.toLowerCase() || s === sub.toLowerCase().replace(/s$/, ''));
      ctx.add(
        'error',
        'rule-subresource',
        `${at}.resources: ${JSON.stringify(written)}: ${name} has no subresource ${JSON.stringify(sub)}` +
          (alike ? `; did you mean ${JSON.stringify(`${name}/${alike}`)}?` : '') +
          ` (it has ${subs.length ? subs.join(', ') : 'none'})`,
      );
      return undefined;
    }
  } else if (sub === '*') {
    targets = own.filter((c) => c.resource === name && versions.includes(c.version));
  }
  return targets;
}

/** Warns when a built-in resource is served at the rule's versions by older Kubernetes versions only. */
function warnRemoved(written: string, main: Candidate[], targets: Candidate[], g: GroupCheck): void {
  const { at, ctx, group, versions } = g;
  const latest = targets.filter((c) => c.minors?.has(LAST_TABLE_MINOR));
  if (!latest.length) {
    const minors = new Set(targets.flatMap((c) => [...(c.minors ?? [])]));
    const now = main
      .filter((c) => c.minors?.has(LAST_TABLE_MINOR))
      .map((c) => (group ? `${group}/${c.version}` : c.version));
    ctx.add(
      'warning',
      'rule-removed',
      `${at}: ${written} at ${quoted(versions)} is served by Kubernetes ${describeMinors(minors)} only` +
        (now.length ? `; later versions serve it at ${quoted(now)}` : ''),
    );
  }
}

/** Checks a rule's operations against what happens on the resources it names. */
function checkOperations(at: string, ops: Operation[], scan: RuleScan, ctx: Context): void {
  const { known, open, matches } = scan;
  // Reported: a resource none of the operations happens on, and an operation that happens on
  // nothing the rule names (not one that merely skips some of its resources, as CREATE on pods/status).
  const takenByAny = new Set(known.flatMap((k) => [...k.takes]));
  const deadOps = open ? [] : ops.filter((o) => !takenByAny.has(o));
  for (const { written, takes, connectSubs } of known) {
    const none = !ops.some((o) => takes.has(o));
    const never = none ? ops : ops.filter((o) => deadOps.includes(o));
    if (!never.length) continue;
    const why = !takes.size
      ? `no request to ${written} is ever admitted (it is read-only)`
      : never.includes('CONNECT') && !takes.has('CONNECT')
        ? 'CONNECT happens only on connect subresources' +
          (connectSubs.length ? ` (${connectSubs.join(', ')})` : ', and this resource has none')
        : `${written} takes ${[...takes].join(', ')}`;
    const verb = never.length > 1 ? 'happen' : 'happens';
    const message = `${at}.operations: ${never.join(', ')} never ${verb} on ${written}: ${why}`;
    ctx.add(matches || open ? 'warning' : 'error', 'rule-operations', message);
  }
}
