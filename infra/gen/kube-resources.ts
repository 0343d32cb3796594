/**
 * Generates lib/k8s/resource-table.ts: the built-in resources of each Kubernetes minor version
 * (group, version, plural name, kind, scope, subresources and the admission operations each takes),
 * read from the API clients `@kubernetes/client-node` generates from the Kubernetes OpenAPI document,
 * one package version per Kubernetes minor. Run once when a Kubernetes version is added:
 *
 *   node --import tsx infra/gen/kube-resources.ts [cache-dir]
 *
 * It fetches the packages with `npm pack` (into cache-dir, default a temporary folder) and writes
 * the table; nothing of the packages is committed but the table.
 */
import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

/**
 * The client package generated from each Kubernetes minor (its README's compatibility table; from
 * 0.13 on a new minor of the client tracks a new Kubernetes minor). MARKERS below checks each.
 */
const CLIENTS: Array<[minor: number, client: string]> = [
  [18, '0.12.3'],
  [19, '0.13.2'],
  [20, '0.14.3'],
  [21, '0.15.1'],
  [22, '0.16.3'],
  [24, '0.17.1'],
  [25, '0.18.1'],
  [27, '0.19.0'],
  [28, '0.20.0'],
  [29, '0.21.0'],
  [30, '0.22.3'],
  [32, '1.0.0'],
  [33, '1.2.0'],
  [34, '1.4.0'],
];

/**
 * Resources whose first (or last) release is known from the Kubernetes changelogs: each snapshot
 * must agree, so a client generated from another minor than CLIENTS says fails the generation.
 */
const MARKERS: Array<{ id: string; from?: number; until?: number }> = [
  { id: 'discovery.k8s.io/v1/endpointslices', from: 21 },
  { id: 'extensions/v1beta1/ingresses', until: 21 },
  { id: 'autoscaling/v2/horizontalpodautoscalers', from: 23 },
  { id: 'batch/v1beta1/cronjobs', until: 24 },
  { id: 'policy/v1beta1/podsecuritypolicies', until: 24 },
  { id: 'flowcontrol.apiserver.k8s.io/v1beta3/flowschemas', from: 26 },
  { id: 'flowcontrol.apiserver.k8s.io/v1/flowschemas', from: 29 },
  { id: 'admissionregistration.k8s.io/v1/validatingadmissionpolicies', from: 30 },
  { id: 'coordination.k8s.io/v1alpha2/leasecandidates', from: 32 },
  { id: 'networking.k8s.io/v1alpha1/clustercidrs', from: 25, until: 28 },
  { id: 'storage.k8s.io/v1beta1/csistoragecapacities', from: 21, until: 26 },
  { id: 'storage.k8s.io/v1/csistoragecapacities', from: 24 },
  { id: 'flowcontrol.apiserver.k8s.io/v1beta1/flowschemas', from: 20, until: 25 },
  { id: 'networking.k8s.io/v1/ingressclasses', from: 19 },
  { id: 'admissionregistration.k8s.io/v1alpha1/mutatingadmissionpolicies', from: 32 },
  { id: 'networking.k8s.io/v1/ipaddresses', from: 33 },
  { id: 'resource.k8s.io/v1/resourceclaims', from: 34 },
];

type Op = 'C' | 'U' | 'D' | 'X';
interface Found {
  kind?: string;
  namespaced: boolean;
  ops: Set<Op>;
  subresources: Map<string, Set<Op>>;
}

const OPS: Record<string, Op> = {
  create: 'C',
  replace: 'U',
  patch: 'U',
  delete: 'D',
  deleteCollection: 'D',
  connect: 'X',
};

/** The resources of one client package: `group/version/plural` → what was found. */
export function readClient(dir: string): Map<string, Found> {
  const gen = ['dist/gen/apis', 'dist/gen/api'].map((d) => join(dir, d)).find(existsSync);
  if (!gen) throw new Error(`${dir}: no generated API classes`);
  const out = new Map<string, Found>();
  for (const file of readdirSync(gen).filter((f) => /Api\.js$/.test(f))) {
    let method = '';
    for (const line of readFileSync(join(gen, file), 'utf8').split('\n')) {
      const def = /^ {4}(?:async\s+)?([a-z]\w*)\s*\(/.exec(line);
      if (def) method = def[1]!;
      const pathMatch = /localVarPath\s*=\s*(?:this\.basePath\s*\+\s*)?['"`](\/[^'"`]+)['"`]/.exec(line);
      if (!pathMatch || !method || method.endsWith('WithHttpInfo')) continue;
      const verb = /^(connect|create|replace|patch|deleteCollection|delete|read|list|watch)/.exec(method)?.[1];
      const current = method;
      method = '';
      if (!verb || verb === 'watch') continue;
      const segments = pathMatch[1]!.split('/').filter(Boolean);
      let group: string;
      let rest: string[];
      if (segments[0] === 'api' && segments[1] === 'v1') [group, rest] = ['', segments.slice(1)];
      else if (segments[0] === 'apis' && segments.length >= 3) [group, rest] = [segments[1]!, segments.slice(2)];
      else continue;
      const version = rest[0]!;
      rest = rest.slice(1);
      if (rest[0] === 'watch' || !rest.length) continue;
      const namespaced = rest[0] === 'namespaces' && rest[1] === '{namespace}' && rest.length > 2;
      if (namespaced) rest = rest.slice(2);
      const [plural, name, sub] = rest;
      if (!plural || plural.startsWith('{') || (name !== undefined && name !== '{name}')) continue;
      // list across namespaces (/api/v1/pods) says nothing of scope
      if (!namespaced && /ForAllNamespaces$/.test(current)) continue;
      const id = `${group}/${version}/${plural}`;
      const entry = out.get(id) ?? { namespaced, ops: new Set<Op>(), subresources: new Map<string, Set<Op>>() };
      if (namespaced) entry.namespaced = true;
      out.set(id, entry);
      const op = OPS[verb];
      if (sub) {
        const ops = entry.subresources.get(sub) ?? new Set<Op>();
        if (op) ops.add(op);
        entry.subresources.set(sub, ops);
      } else {
        if (op) entry.ops.add(op);
        if ((verb === 'read' || verb === 'create') && !entry.kind) {
          entry.kind = current.slice(verb.length).replace(/^Namespaced/, '');
        }
      }
    }
  }
  return out;
}

function fetchClient(cache: string, version: string): string {
  const dir = join(cache, `client-node-${version}`);
  if (existsSync(join(dir, 'package', 'package.json'))) return join(dir, 'package');
  mkdirSync(dir, { recursive: true });
  const tgz = execFileSync(
    'npm',
    ['pack', `@kubernetes/client-node@${version}`, '--pack-destination', dir, '--silent'],
    { encoding: 'utf8' },
  )
    .trim()
    .split('\n')
    .pop()!;
  execFileSync('tar', ['xzf', join(dir, tgz), '-C', dir]);
  return join(dir, 'package');
}

/** `[[18, 22], [24, 34]]` → `18-22,24-34`. */
function ranges(minors: number[]): string {
  const out: string[] = [];
  for (const m of minors.sort((a, b) => a - b)) {
    const last = out.at(-1)?.split('-');
    const end = last ? Number(last.at(-1)) : NaN;
    if (last && m === end + 1) out[out.length - 1] = `${last[0]}-${m}`;
    else out.push(String(m));
  }
  return out.join(',');
}

function main(): void {
  const cache = process.argv[2] ?? mkdtempSync(join(tmpdir(), 'klw-kube-resources-'));
  const snapshots = CLIENTS.map(([minor, client]) => ({ minor, resources: readClient(fetchClient(cache, client)) }));
  for (const marker of MARKERS) {
    for (const { minor, resources } of snapshots) {
      const expected =
        (marker.from === undefined || minor >= marker.from) && (marker.until === undefined || minor <= marker.until);
      if (resources.has(marker.id) !== expected)
        throw new Error(
          `1.${minor}: ${marker.id} ${expected ? 'missing' : 'present'}; is ${CLIENTS.find((c) => c[0] === minor)![1]} from another minor?`,
        );
    }
  }
  // A minor without a snapshot is taken to have the resources of the snapshot before it.
  const all = new Map<
    string,
    {
      kind: string;
      namespaced: boolean;
      ops: Set<Op>;
      minors: number[];
      subresources: Map<string, { ops: Set<Op>; minors: number[] }>;
    }
  >();
  snapshots.forEach(({ minor, resources }, i) => {
    const next = snapshots[i + 1]?.minor ?? minor + 1;
    const covered = Array.from({ length: next - minor }, (_, k) => minor + k);
    for (const [id, found] of resources) {
      const entry = all.get(id) ?? {
        kind: '',
        namespaced: found.namespaced,
        ops: new Set<Op>(),
        minors: [] as number[],
        subresources: new Map(),
      };
      entry.kind ||= found.kind ?? '';
      entry.namespaced ||= found.namespaced;
      for (const op of found.ops) entry.ops.add(op);
      entry.minors.push(...covered);
      for (const [sub, ops] of found.subresources) {
        const s = entry.subresources.get(sub) ?? { ops: new Set<Op>(), minors: [] as number[] };
        for (const op of ops) s.ops.add(op);
        s.minors.push(...covered);
        entry.subresources.set(sub, s);
      }
      all.set(id, entry);
    }
  });
  const order: Op[] = ['C', 'U', 'D', 'X'];
  const opText = (ops: Set<Op>) => order.filter((o) => ops.has(o)).join('');
  const lines = [...all.entries()]
    .sort(([a], [b]) => (a < b ? -1 : 1))
    .map(([id, e]) => {
      const subs = [...e.subresources.entries()]
        .sort(([a], [b]) => (a < b ? -1 : 1))
        .map(([sub, s]) => `${sub}:${opText(s.ops)}:${ranges(s.minors)}`);
      return `  ${JSON.stringify([id, e.kind, e.namespaced ? 'N' : 'C', opText(e.ops), ranges(e.minors), subs.join(' ')])},`;
    });
  const first = snapshots[0]!.minor;
  const last = snapshots.at(-1)!.minor;
  const text = `// Generated by infra/gen/kube-resources.ts from @kubernetes/client-node ${CLIENTS.map((c) => c[1]).join(', ')}; do not edit.
/* eslint-disable */

/** The first and last Kubernetes minor (1.x) the table was read for; older minors are checked as the first. */
export const RESOURCE_TABLE_MINORS = [${first}, ${last}] as const;

/**
 * The built-in resources: \`group/version/plural\`, kind, scope (\`N\`amespaced or \`C\`luster), the
 * admission operations it takes (\`C\`REATE, \`U\`PDATE, \`D\`ELETE, \`X\` CONNECT), the minors serving it,
 * and its subresources as \`name:operations:minors\` separated by spaces.
 */
export const RESOURCE_TABLE: ReadonlyArray<readonly [id: string, kind: string, scope: 'N' | 'C', operations: string, minors: string, subresources: string]> = [
${lines.join('\n')}
];
`;
  const target = fileURLToPath(new URL('../../lib/k8s/resource-table.ts', import.meta.url));
  writeFileSync(target, text);
  console.error(`wrote ${target}: ${lines.length} resources, Kubernetes 1.${first} to 1.${last}`);
  writeKinds(all, last);
}

/** Version preference of the API server's discovery: GA, then beta, then alpha, newer first. */
function versionRank(version: string): number {
  const m = /^v(\d+)(?:(alpha|beta)(\d+))?$/.exec(version);
  if (!m) return -1;
  const level = m[2] === 'alpha' ? 0 : m[2] === 'beta' ? 1 : 2;
  return level * 1e6 + Number(m[1]) * 1e3 + Number(m[3] ?? 0);
}

/**
 * Writes lib/k8s/kinds.ts: a descriptor for `on(...)` per kind the newest minor serves at a GA or
 * beta version (its preferred version), typed by the kubernetes-models package's interface.
 */
function writeKinds(all: Map<string, { kind: string; namespaced: boolean; minors: number[] }>, last: number): void {
  const models = fileURLToPath(new URL('../../node_modules/kubernetes-models/', import.meta.url));
  const best = new Map<string, { group: string; version: string; resource: string; namespaced: boolean }>();
  for (const [id, e] of all) {
    const [group, version, resource] = id.split('/') as [string, string, string];
    if (!e.kind || !e.minors.includes(last) || version.includes('alpha')) continue;
    const key = `${group}/${e.kind}`;
    const seen = best.get(key);
    if (!seen || versionRank(version) > versionRank(seen.version))
      best.set(key, { group, version, resource, namespaced: e.namespaced });
  }
  const names = new Set<string>();
  const imports: string[] = [];
  const consts: string[] = [];
  // The core group first, so Event is the core one; a kind already taken keeps its first group.
  const sorted = [...best.entries()].sort(([a], [b]) =>
    a.startsWith('/') === b.startsWith('/') ? (a < b ? -1 : 1) : a.startsWith('/') ? -1 : 1,
  );
  for (const [key, r] of sorted) {
    const kind = key.split('/').pop()!;
    const modelPath = `${r.group || ''}${r.group ? '/' : ''}${r.version}/${kind}`;
    if (names.has(kind)) continue;
    names.add(kind);
    // A kind newer than the models (the version that runs on Node 20 stops before 1.34): any object.
    const typed = existsSync(join(models, `${modelPath}.d.ts`));
    if (typed) imports.push(`import type { I${kind} as ${kind}Object } from 'kubernetes-models/${modelPath}';`);
    consts.push(
      typed
        ? `/** A ${kind} as a review carries it, the type to name in signatures: \`(o: ${kind}) => …\`. */`
        : `/** A ${kind} as a review carries it: any object (the models for Node 20 predate its Kubernetes 1.34 API). */`,
      typed ? `export type ${kind} = ReviewObject<${kind}Object>;` : `export type ${kind} = KubeObject;`,
      `/** ${r.group || 'core'}/${r.version} ${r.resource} (${r.namespaced ? 'namespaced' : 'cluster-scoped'}). */`,
      `export const ${kind}: ResourceDescriptor<${kind}> = { group: '${r.group}', version: '${r.version}', resource: '${r.resource}', kind: '${kind}', namespaced: ${r.namespaced} };`,
    );
  }
  const text = `// Generated by infra/gen/kube-resources.ts; do not edit.
// size: a generated table, one descriptor per built-in kind; the generator keeps it whole.
// Resource descriptors for on(...): plain objects; the object types come from kubernetes-models as types only,
// each under its descriptor's name (Pod is a value for on(Pod) and a type for (pod: Pod) => …).
import type { KubeObject } from '../review/schemas.ts';
import type { ResourceDescriptor, ReviewObject } from '../rule-builder.ts';
${imports.join('\n')}

${consts.join('\n')}
`;
  const target = fileURLToPath(new URL('../../lib/k8s/kinds.ts', import.meta.url));
  writeFileSync(target, text);
  console.error(`wrote ${target}: ${names.size} kinds`);
}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) main();
