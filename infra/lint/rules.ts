/**
 * Checks webhook rules against the resources they name: the built-in resources of Kubernetes
 * (lib/k8s/resource-table.ts) and the CRDs the project ships. A rule that names no real resource,
 * a version the group does not serve, a subresource the resource lacks, an operation that never
 * happens on it or the wrong scope is never sent a review: the webhook silently does nothing.
 * Groups that are neither built in nor shipped are taken as CRDs installed otherwise and pass.
 */
import { type Dirent, readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { parseAllDocuments } from 'yaml';
import {
  builtinResources,
  describeMinors,
  LAST_TABLE_MINOR,
  tableMinor,
  type BuiltinResource,
} from '../../lib/k8s/resources.ts';
import type { Operation } from '../../lib/review/schemas.ts';
import type { Finding } from '../lint.ts';

type Json = Record<string, any>;

/** What a rule can match: a built-in resource or a shipped CRD's, in the same shape. */
type Candidate = Omit<BuiltinResource, 'minors'> & { minors?: ReadonlySet<number>; crd?: string };

const ALL_OPERATIONS: Operation[] = ['CREATE', 'UPDATE', 'DELETE', 'CONNECT'];

function isStringList(value: unknown): value is string[] {
  return Array.isArray(value) && value.every((v) => typeof v === 'string');
}

/** The resources of the CRDs among the documents, as candidates (main resource, status, scale). */
function crdCandidates(documents: Json[]): Map<string, Candidate[]> {
  const byGroup = new Map<string, Candidate[]>();
  for (const doc of documents) {
    if (doc?.kind !== 'CustomResourceDefinition') continue;
    const spec = doc.spec;
    const plural = spec?.names?.plural;
    if (typeof spec?.group !== 'string' || typeof plural !== 'string' || !Array.isArray(spec.versions)) continue;
    const list = byGroup.get(spec.group) ?? [];
    const base = {
      group: spec.group,
      resource: plural,
      kind: String(spec.names.kind ?? ''),
      namespaced: spec.scope !== 'Cluster',
      crd: String(doc.metadata?.name ?? `${plural}.${spec.group}`),
    };
    for (const v of spec.versions) {
      if (typeof v?.name !== 'string' || v.served === false) continue;
      list.push({ ...base, version: v.name, operations: ['CREATE', 'UPDATE', 'DELETE'] });
      for (const sub of ['status', 'scale']) {
        if (v.subresources?.[sub] !== undefined)
          list.push({ ...base, version: v.name, subresource: sub, operations: ['UPDATE'] });
      }
    }
    byGroup.set(spec.group, list);
  }
  return byGroup;
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

function quoted(values: Iterable<string>): string {
  return [...new Set(values)].map((v) => JSON.stringify(v)).join(', ');
}

interface Context {
  add: (level: Finding['level'], rule: string, message: string) => void;
  builtin: ReadonlyMap<string, Candidate[]>;
  crds: ReadonlyMap<string, Candidate[]>;
  singulars: ReadonlyMap<string, string>;
}

/** Checks one rule of a webhook. */
function checkRule(rule: Json, at: string, ctx: Context): void {
  const { apiGroups, apiVersions, resources, operations } = rule;
  if (!isStringList(apiGroups) || !isStringList(apiVersions) || !isStringList(resources) || !isStringList(operations))
    return;
  const scope = typeof rule.scope === 'string' ? rule.scope : '*';
  const ops = operations.includes('*')
    ? ALL_OPERATIONS
    : (operations.filter((o) => ALL_OPERATIONS.includes(o as Operation)) as Operation[]);
  // Operations that never happen on a resource are an error only when nothing of the rule matches.
  const known: Array<{ written: string; takes: ReadonlySet<Operation>; connectSubs: string[] }> = [];
  // Set when something the rule names may match: a wildcard, a group this check does not know.
  let open = false;
  let matches = false;
  for (const group of apiGroups) {
    if (group === '*') {
      open = true;
      continue;
    }
    if (group === 'core' || group === 'v1') {
      ctx.add(
        'error',
        'rule-group',
        `${at}.apiGroups: ${JSON.stringify(group)} is no API group; ` +
          'the core group (pods, services, configmaps) is "": apiGroups: [""]',
      );
      continue;
    }
    if (group.includes('/')) {
      const [g, v] = group.split('/');
      ctx.add(
        'error',
        'rule-group',
        `${at}.apiGroups: ${JSON.stringify(group)} is a group and version; ` +
          `write apiGroups: [${JSON.stringify(g)}], apiVersions: [${JSON.stringify(v)}]`,
      );
      continue;
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
      else open = true;
      continue; // a CRD installed by other means
    }
    const source = ctx.crds.has(group)
      ? `the CRD ${quoted(own.map((c) => c.crd!))}`
      : `Kubernetes 1.${LAST_TABLE_MINOR}`;
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
    for (const written of resources) {
      const [name = '', sub] = written.split('/');
      if (name === '*') {
        open = true;
        continue;
      }
      const main = own.filter((c) => c.resource === name && !c.subresource);
      if (!main.length) {
        const alike = own.find(
          (c) => !c.subresource && looksLike(name, c, ctx.singulars.get(`${c.group}/${c.resource}`)),
        );
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
        continue;
      }
      const served = main.filter((c) => versions.includes(c.version));
      if (!served.length) {
        ctx.add(
          'error',
          'rule-version',
          `${at}: ${JSON.stringify(name)} is not served at ${quoted(versions.map(atGroup))}; ` +
            `it is at ${quoted(main.map((c) => atGroup(c.version)))}`,
        );
        continue;
      }
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
          continue;
        }
      } else if (sub === '*') {
        targets = own.filter((c) => c.resource === name && versions.includes(c.version));
      }
      if (!ctx.crds.has(group)) {
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
      const takes = new Set(targets.flatMap((c) => c.operations));
      if (ops.some((o) => takes.has(o))) matches = true;
      const connectSubs = [
        ...new Set(
          own
            .filter((c) => c.resource === name && c.operations.includes('CONNECT'))
            .map((c) => `${name}/${c.subresource}`),
        ),
      ];
      known.push({ written, takes, connectSubs });
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
  }
  if (operations.includes('*')) return;
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

let builtinByGroup: Map<string, Candidate[]> | undefined;
function builtinIndex(): Map<string, Candidate[]> {
  if (builtinByGroup) return builtinByGroup;
  builtinByGroup = new Map();
  for (const r of builtinResources()) {
    const list = builtinByGroup.get(r.group) ?? [];
    list.push(r);
    builtinByGroup.set(r.group, list);
  }
  return builtinByGroup;
}

/** The admission webhooks of the documents, with where each is. */
function* webhooksOf(documents: Json[]): Generator<Json> {
  for (const doc of documents) {
    if (doc?.kind !== 'MutatingWebhookConfiguration' && doc?.kind !== 'ValidatingWebhookConfiguration') continue;
    if (!Array.isArray(doc.webhooks)) continue;
    for (const w of doc.webhooks)
      if (w && typeof w === 'object' && !Array.isArray(w) && Array.isArray(w.rules)) yield w;
  }
}

/**
 * Lints the rules of the webhook configurations among `documents` against the built-in resources
 * of every Kubernetes version the table covers and the CRDs among the documents.
 */
export function lintRuleResources(documents: Json[]): Finding[] {
  const findings: Finding[] = [];
  const crds = crdCandidates(documents);
  const singulars = new Map<string, string>();
  for (const doc of documents) {
    const s = doc?.kind === 'CustomResourceDefinition' ? doc.spec : undefined;
    if (typeof s?.names?.singular === 'string') singulars.set(`${s.group}/${s.names.plural}`, s.names.singular);
  }
  for (const webhook of webhooksOf(documents)) {
    const subject = typeof webhook.name === 'string' ? webhook.name : '(unnamed webhook)';
    const add = (level: Finding['level'], rule: string, message: string) =>
      findings.push({ level, rule, subject, message });
    webhook.rules.forEach((rule: unknown, i: number) => {
      if (rule && typeof rule === 'object')
        checkRule(rule as Json, `rules[${i}]`, { add, builtin: builtinIndex(), crds, singulars });
    });
  }
  return findings;
}

/**
 * What one Kubernetes version does not serve of the built-in resources the rules name (minors
 * outside the table are checked as its nearest end).
 */
export function lintRulesForVersion(documents: Json[], minor: number): Finding[] {
  const findings: Finding[] = [];
  const checked = tableMinor(minor);
  const builtin = builtinIndex();
  const crdGroups = crdCandidates(documents);
  for (const webhook of webhooksOf(documents)) {
    webhook.rules.forEach((rule: Json, i: number) => {
      if (!rule || !isStringList(rule.apiGroups) || !isStringList(rule.apiVersions) || !isStringList(rule.resources))
        return;
      for (const group of rule.apiGroups) {
        const own = crdGroups.has(group) ? undefined : builtin.get(group);
        if (!own) continue;
        for (const written of rule.resources) {
          const [name = '', sub] = written.split('/');
          if (name === '*') continue;
          const matching = own.filter(
            (c) =>
              c.resource === name &&
              (sub === undefined ? !c.subresource : sub === '*' || c.subresource === sub) &&
              (rule.apiVersions.includes('*') || rule.apiVersions.includes(c.version)),
          );
          if (!matching.length || matching.some((c) => c.minors?.has(checked))) continue;
          const minors = new Set(matching.flatMap((c) => [...(c.minors ?? [])]));
          findings.push({
            level: 'error',
            rule: 'kube-version-resource',
            subject: typeof webhook.name === 'string' ? webhook.name : '(unnamed webhook)',
            message:
              `rules[${i}]: Kubernetes ${Number.isFinite(minor) ? `1.${minor}` : `after 1.${LAST_TABLE_MINOR}`} ` +
              `does not serve ${written} at ${quoted(rule.apiVersions.map((v: string) => (group ? `${group}/${v}` : v)))}` +
              ' ' +
              `(served by ${describeMinors(minors)})`,
          });
        }
      }
    });
  }
  return findings;
}

/** Folders never searched for CRDs: dependencies, build output, local state. */
const SKIPPED = new Set(['node_modules', 'dist', 'pkg', 'coverage', 'cdk.out']);
/** Manifests larger than this are not CRDs a project writes by hand (a CRD is a few hundred KB at most). */
const MAX_MANIFEST_BYTES = 4 * 1024 * 1024;
/** How deep below the root CRD files are looked for. */
const MAX_DEPTH = 6;

/**
 * The CRDs in the project's YAML and JSON files (outside dependencies and build output), so rules
 * on a CRD the project ships are checked against it. Files that do not parse are skipped: lint
 * reads the manifests it checks elsewhere.
 */
export function projectCrds(root: string): Json[] {
  const out: Json[] = [];
  const walk = (dir: string, depth: number) => {
    let entries: Dirent[];
    try {
      entries = readdirSync(dir, { withFileTypes: true });
    } catch {
      return;
    }
    for (const entry of entries) {
      if (entry.name.startsWith('.')) continue;
      const path = join(dir, entry.name);
      if (entry.isDirectory()) {
        if (depth < MAX_DEPTH && !SKIPPED.has(entry.name)) walk(path, depth + 1);
      } else if (entry.isFile() && /\.(ya?ml|json)$/.test(entry.name)) {
        try {
          if (statSync(path).size > MAX_MANIFEST_BYTES) continue;
          const text = readFileSync(path, 'utf8');
          if (!text.includes('CustomResourceDefinition')) continue;
          for (const doc of parseAllDocuments(text)) {
            const value = doc.errors.length ? undefined : doc.toJS({ maxAliasCount: 100 });
            if (value?.kind === 'CustomResourceDefinition') out.push(value);
          }
        } catch {
          // unreadable or not YAML: not a CRD this check can use
        }
      }
    }
  };
  walk(root, 0);
  return out;
}

/**
 * The project's CRDs not already among `documents` (by name), without their conversion: context
 * for the rule checks, whose own conversion lint reads from the generated manifests.
 */
export function shippedCrds(root: string, documents: Json[]): Json[] {
  const present = new Set(documents.filter((d) => d?.kind === 'CustomResourceDefinition').map((d) => d.metadata?.name));
  return projectCrds(root)
    .filter((crd) => !present.has(crd.metadata?.name))
    .map((crd) => ({ ...crd, spec: { ...crd.spec, conversion: undefined } }));
}
