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
import { builtinResources, describeMinors, LAST_TABLE_MINOR, tableMinor } from '../../lib/internal.ts';
import type { Finding } from './finding.ts';
import { type Candidate, checkRule, isStringList, quoted } from './rule-check.ts';
import { isRecord } from '../json.ts';
import type { KubeDocument } from '../output.ts';

/**
 * A CustomResourceDefinition as a manifest holds it, read with care: any field may be missing or
 * of another type, and each is checked where it is used.
 */
interface CrdView {
  kind?: unknown;
  metadata?: { name?: unknown } | null;
  spec?: {
    group?: unknown;
    scope?: unknown;
    names?: { plural?: unknown; singular?: unknown; kind?: unknown } | null;
    versions?: unknown;
    conversion?: unknown;
  } | null;
}

/** A version of a CRD as written, read with care. */
type CrdVersionView = { name?: unknown; served?: unknown; subresources?: Record<string, unknown> | null } | null;

/** A webhook whose `rules` is a list (its members read with care). */
type RuledWebhook = Record<string, unknown> & { rules: unknown[] };

/** The resources of the CRDs among the documents, as candidates (main resource, status, scale). */
function crdCandidates(documents: readonly KubeDocument[]): Map<string, Candidate[]> {
  const byGroup = new Map<string, Candidate[]>();
  for (const document of documents) {
    const doc = document as CrdView;
    if (doc?.kind !== 'CustomResourceDefinition') continue;
    const spec = doc.spec;
    const plural = spec?.names?.plural;
    if (typeof spec?.group !== 'string' || typeof plural !== 'string' || !Array.isArray(spec.versions)) continue;
    const list = byGroup.get(spec.group) ?? [];
    const base = {
      group: spec.group,
      resource: plural,
      kind: String(spec.names?.kind ?? ''),
      namespaced: spec.scope !== 'Cluster',
      crd: String(doc.metadata?.name ?? `${plural}.${spec.group}`),
    };
    for (const v of spec.versions as CrdVersionView[]) {
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
function* webhooksOf(documents: readonly KubeDocument[]): Generator<RuledWebhook> {
  for (const doc of documents) {
    if (doc?.kind !== 'MutatingWebhookConfiguration' && doc?.kind !== 'ValidatingWebhookConfiguration') continue;
    if (!Array.isArray(doc.webhooks)) continue;
    for (const w of doc.webhooks) if (isRecord(w) && Array.isArray(w.rules)) yield w as RuledWebhook;
  }
}

/**
 * Lints the rules of the webhook configurations among `documents` against the built-in resources
 * of every Kubernetes version the table covers and the CRDs among the documents.
 */
export function lintRuleResources(documents: readonly KubeDocument[]): Finding[] {
  const findings: Finding[] = [];
  const crds = crdCandidates(documents);
  const singulars = new Map<string, string>();
  for (const document of documents) {
    const doc = document as CrdView;
    const s = doc?.kind === 'CustomResourceDefinition' ? doc.spec : undefined;
    if (typeof s?.names?.singular === 'string') singulars.set(`${s.group}/${s.names.plural}`, s.names.singular);
  }
  for (const webhook of webhooksOf(documents)) {
    const subject = typeof webhook.name === 'string' ? webhook.name : '(unnamed webhook)';
    const add = (level: Finding['level'], rule: string, message: string) =>
      findings.push({ level, rule, subject, message });
    webhook.rules.forEach((rule: unknown, i: number) => {
      if (rule && typeof rule === 'object')
        checkRule(rule as Record<string, unknown>, `rules[${i}]`, { add, builtin: builtinIndex(), crds, singulars });
    });
  }
  return findings;
}

/**
 * What one Kubernetes version does not serve of the built-in resources the rules name (minors
 * outside the table are checked as its nearest end).
 */
export function lintRulesForVersion(documents: readonly KubeDocument[], minor: number): Finding[] {
  const findings: Finding[] = [];
  const checked = tableMinor(minor);
  const builtin = builtinIndex();
  const crdGroups = crdCandidates(documents);
  for (const webhook of webhooksOf(documents)) {
    webhook.rules.forEach((member: unknown, i: number) => {
      const rule = member as { apiGroups?: unknown; apiVersions?: unknown; resources?: unknown } | null;
      const apiGroups = rule?.apiGroups;
      const apiVersions = rule?.apiVersions;
      const resources = rule?.resources;
      if (!rule || !isStringList(apiGroups) || !isStringList(apiVersions) || !isStringList(resources)) return;
      for (const group of apiGroups) {
        const own = crdGroups.has(group) ? undefined : builtin.get(group);
        if (!own) continue;
        for (const written of resources) {
          const [name = '', sub] = written.split('/');
          if (name === '*') continue;
          const matching = own.filter(
            (c) =>
              c.resource === name &&
              (sub === undefined ? !c.subresource : sub === '*' || c.subresource === sub) &&
              (apiVersions.includes('*') || apiVersions.includes(c.version)),
          );
          if (!matching.length || matching.some((c) => c.minors?.has(checked))) continue;
          const minors = new Set(matching.flatMap((c) => [...(c.minors ?? [])]));
          findings.push({
            level: 'error',
            rule: 'kube-version-resource',
            subject: typeof webhook.name === 'string' ? webhook.name : '(unnamed webhook)',
            message:
              `rules[${i}]: Kubernetes ${Number.isFinite(minor) ? `1.${minor}` : `after 1.${LAST_TABLE_MINOR}`} ` +
              `does not serve ${written} at ${quoted(apiVersions.map((v: string) => (group ? `${group}/${v}` : v)))}` +
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
export function projectCrds(root: string): KubeDocument[] {
  const out: KubeDocument[] = [];
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
export function shippedCrds(root: string, documents: readonly KubeDocument[]): KubeDocument[] {
  const nameOf = (d: KubeDocument) => (d as CrdView).metadata?.name;
  const present = new Set(documents.filter((d) => d?.kind === 'CustomResourceDefinition').map(nameOf));
  return projectCrds(root)
    .filter((crd) => !present.has(nameOf(crd)))
    .map((crd) => ({ ...crd, spec: { ...(crd as CrdView).spec, conversion: undefined } }));
}
