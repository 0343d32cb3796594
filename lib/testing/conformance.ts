import assert from 'node:assert/strict';
import { existsSync, readFileSync } from 'node:fs';
import { relative, resolve } from 'node:path';
import type { AdmissionWebhook } from '../admission/webhook.ts';
import type { ConversionWebhook } from '../conversion/webhook.ts';
import type { AdmissionRegistration } from '../registration.ts';
import type { RuleWithOperations } from '../rule-builder.ts';
import type { KubeObject, Operation } from '../review/schemas.ts';
import { findFunctions, functionModuleUrl, noFunctionsMessage } from '../harness/discover.ts';
import { invoke } from '../harness/invoke.ts';
import { admissionReview, kindOf } from '../harness/reviews.ts';
import { conversionChecks } from './conformance-conversion.ts';
import {
  ANY_GROUP,
  ANY_VERSION,
  type ConformanceCheck,
  type ConformanceOptions,
  sampleHint,
} from './conformance-shared.ts';
import { asFields, sampleFromSchema } from './schema-sample.ts';

export type { ConformanceCheck, ConformanceOptions } from './conformance-shared.ts';
export { sampleHint } from './conformance-shared.ts';
export { sampleFromSchema } from './schema-sample.ts';

/** The check with the sample hint added to its failure message. */
function withHint(name: string, check: ConformanceCheck): ConformanceCheck {
  return {
    name: check.name,
    run: async () => {
      try {
        return await check.run();
      } catch (err) {
        if (!(err instanceof assert.AssertionError) || err.message.includes('describeConformance({ samples')) throw err;
        throw new assert.AssertionError({ message: `${err.message}\n${sampleHint(name)}` });
      }
    },
  };
}

/** The parts of a CRD manifest samples are generated from. */
interface CrdShape {
  kind?: string;
  spec?: {
    group?: string;
    scope?: string;
    names?: { plural?: string; kind?: string };
    versions?: Array<{ name?: string; served?: boolean; schema?: { openAPIV3Schema?: unknown } }>;
  };
}

/** The CRD of a group and plural resource among `crds`, if any. */
function crdFor(crds: unknown[] | undefined, group: string, resource: string): CrdShape | undefined {
  return (crds ?? []).find((c): c is CrdShape => {
    const crd = c as CrdShape | null;
    const spec = crd?.kind === 'CustomResourceDefinition' ? crd.spec : undefined;
    return spec?.group === group && spec?.names?.plural === resource;
  });
}

/** The versions a CRD lists, when it lists them as it should. */
function crdVersions(crd: CrdShape | undefined): NonNullable<NonNullable<CrdShape['spec']>['versions']> {
  return Array.isArray(crd?.spec?.versions) ? crd.spec.versions.filter((v) => v && typeof v.name === 'string') : [];
}

/**
 * The CRDs in a manifest file (none when it cannot be read as YAML). The YAML parser loads here,
 * on first use: most test processes import the test kit and never read a manifest.
 */
export async function readCrds(file: string): Promise<unknown[]> {
  try {
    const { parseAllDocuments } = await import('yaml');
    return parseAllDocuments(readFileSync(file, 'utf8'))
      .map((d) => d.toJS() as CrdShape | null)
      .filter((d) => d?.kind === 'CustomResourceDefinition');
  } catch {
    return [];
  }
}

// Stand-ins for wildcards in rules (group and version: ANY_GROUP, ANY_VERSION).
const ANY_RESOURCE = 'widgets';
const ANY_SUBRESOURCE = 'status';
/** Operations a `*` rule matches that carry objects (CONNECT sends options, not objects, and is not checked). */
const OBJECT_OPERATIONS: Operation[] = ['CREATE', 'UPDATE', 'DELETE'];

/** A request the rule matches: resource, kind and the object to send. */
interface Target {
  operation: Operation;
  group: string;
  version: string;
  resource: string;
  subResource?: string;
  object: KubeObject;
}

function targets(reg: AdmissionRegistration, sample: KubeObject | undefined, crds: unknown[] | undefined): Target[] {
  const out: Target[] = [];
  const seen = new Set<string>();
  for (const rule of reg.rules) {
    const group = pick(rule.apiGroups, ANY_GROUP);
    const [resourcePart = ANY_RESOURCE, sub] = pick(rule.resources, ANY_RESOURCE).split('/');
    const resource = resourcePart === '*' ? ANY_RESOURCE : resourcePart;
    const crd = crdFor(crds, group, resource);
    // Any version of a CRD the project ships: its first served one.
    const version = pick(rule.apiVersions, crdVersions(crd).find((v) => v.served !== false)?.name ?? ANY_VERSION);
    const subResource = sub === undefined ? undefined : sub === '*' ? ANY_SUBRESOURCE : sub;
    const operations = rule.operations.includes('*')
      ? OBJECT_OPERATIONS
      : rule.operations.filter((o): o is Operation => o !== '*' && o !== 'CONNECT');
    for (const operation of operations) {
      const key = [operation, group, version, resource, subResource].join('|');
      if (seen.has(key)) continue;
      seen.add(key);
      const object: KubeObject = sample ? structuredClone(sample) : sampleFor(reg, rule, group, version, resource, crd);
      out.push({ operation, group, version, resource, ...(subResource ? { subResource } : {}), object });
    }
  }
  return out;
}

function pick(values: string[], wildcard: string): string {
  const first = values[0] ?? '*';
  return first === '*' ? wildcard : first;
}

function sampleFor(
  reg: AdmissionRegistration,
  rule: RuleWithOperations,
  group: string,
  version: string,
  resource: string,
  crd?: CrdShape,
): KubeObject {
  const kind = crd?.spec?.names?.kind ?? kindOf(resource);
  const clusterScoped = rule.scope === 'Cluster' || kind === 'Namespace' || crd?.spec?.scope === 'Cluster';
  const metadata: NonNullable<KubeObject['metadata']> = {
    name: 'conformance',
    uid: '5f7b1d5e-0000-4000-8000-000000000001',
  };
  if (!clusterScoped) metadata.namespace = 'default';
  if (reg.objectSelector?.matchLabels) metadata.labels = { ...reg.objectSelector.matchLabels };
  // A CRD the project ships: the object holds what its schema for the version requires.
  const object = asFields(sampleFromSchema(crdVersions(crd).find((v) => v.name === version)?.schema?.openAPIV3Schema));
  return { ...object, apiVersion: group ? `${group}/${version}` : version, kind, metadata };
}

function admissionChecks(webhook: AdmissionWebhook, options: ConformanceOptions): ConformanceCheck[] {
  const reg = webhook.registration;
  const list = targets(reg, options.sample, options.crds);
  const reviewFor = (t: Target, version: 'v1' | 'v1beta1', object: KubeObject | null = t.object) =>
    admissionReview(t.operation === 'DELETE' ? null : object, {
      version,
      operation: t.operation,
      resource: t.resource,
      ...(t.subResource ? { subResource: t.subResource } : {}),
      ...(t.operation === 'UPDATE' || t.operation === 'DELETE' ? { oldObject: t.object } : {}),
    });
  const checks: ConformanceCheck[] = [];
  checks.push({
    name: `answers ${reg.admissionReviewVersions.join(' and ')} reviews of what its rules match, as the API server requires`,
    run: async () => {
      assert.ok(list.length, `${reg.name}: its rules match no CREATE, UPDATE or DELETE of any resource`);
      for (const t of list) {
        for (const version of reg.admissionReviewVersions) {
          const what = `${t.operation} ${t.group || 'core'}/${t.version} ${t.resource}${t.subResource ? `/${t.subResource}` : ''} (admission.k8s.io/${version})`;
          try {
            // invoke checks the answer as the API server does: HTTP 200, apiVersion, uid echoed, schema, patch rules.
            await invoke(webhook, reviewFor(t, version));
          } catch (err) {
            const message = (err as Error).message;
            // invoke's messages name the function already.
            const own = message.startsWith(`${reg.name}: `) ? message.slice(reg.name.length + 2) : message;
            throw new assert.AssertionError({ message: `${reg.name}: ${what}: ${own}` });
          }
        }
      }
    },
  });
  if (reg.type === 'mutating') {
    checks.push({
      name: 'is idempotent: a second call on its own result patches nothing',
      run: async () => {
        for (const t of list.filter((t) => t.operation !== 'DELETE')) {
          const first = await invoke(webhook, reviewFor(t, 'v1'));
          if (!first.allowed || !first.patch.length) continue;
          const second = await invoke(webhook, reviewFor(t, 'v1', first.object));
          assert.deepEqual(
            second.patch,
            [],
            `${reg.name}: ${t.operation} ${t.resource}: not idempotent: the second call patched ${JSON.stringify(second.patch)}`,
          );
        }
      },
    });
  }
  return checks;
}

/**
 * The checks any webhook gets for free: it answers v1 and v1beta1 reviews (those it
 * registers) of what its rules match, with the uid echoed and the API server's response
 * rules kept; a mutating webhook is idempotent; a conversion webhook round-trips objects
 * through the versions it declares.
 */
export function conformanceChecks(
  webhook: AdmissionWebhook | ConversionWebhook,
  options: ConformanceOptions = {},
): ConformanceCheck[] {
  const checks =
    webhook.registration.type === 'conversion'
      ? conversionChecks(webhook as ConversionWebhook, options)
      : admissionChecks(webhook as AdmissionWebhook, options);
  return checks.map((check) => withHint(webhook.registration.name, check));
}

/**
 * Runs every conformance check of a webhook; throws an AssertionError naming the first that
 * fails. Resolves to why checks could not be made with generated objects (asking for a sample).
 */
export async function expectConformance(
  webhook: AdmissionWebhook | ConversionWebhook,
  options: ConformanceOptions = {},
): Promise<string[]> {
  const skipped: string[] = [];
  for (const check of conformanceChecks(webhook, options)) {
    const outcome = await check.run();
    if (outcome) skipped.push(outcome.skipped);
  }
  return skipped;
}

/** The error of a function whose entry throws when imported: naming the file, with the error's own stack. */
function loadFailure(file: string, error: unknown): Error {
  const what = error instanceof Error ? `${error.name}: ${error.message}` : String(error);
  const failure = new Error(`${file} throws when loaded: ${what}`, { cause: error });
  const frames = error instanceof Error ? (error.stack ?? '').split('\n').filter((l) => /^\s+at /.test(l)) : [];
  if (frames.length) failure.stack = `Error: ${failure.message}\n${frames.join('\n')}`;
  return failure;
}

/** Options of `describeConformance`. */
export interface DescribeConformanceOptions {
  /** Project folder holding `functions/`; default the working directory. */
  root?: string;
  /** Objects to send to named functions instead of generated ones. */
  samples?: Record<string, KubeObject>;
}

/**
 * Registers a node:test suite per function found in `<root>/functions` with its conformance
 * checks. Await it at the top of a test file: `await describeConformance();`.
 */
export async function describeConformance(options: DescribeConformanceOptions = {}): Promise<void> {
  const { describe, it } = await import('node:test');
  const root = resolve(options.root ?? process.cwd());
  const sources = findFunctions(root);
  if (!sources.length) {
    it('conformance: no functions yet', (t) => t.diagnostic(noFunctionsMessage(root)));
    return;
  }
  type Loaded = {
    source: (typeof sources)[number];
    webhook?: AdmissionWebhook | ConversionWebhook | undefined;
    thrown?: { error: unknown };
  };
  const loaded: Loaded[] = [];
  for (const source of sources) {
    try {
      // klw test's build of the entry when it made one (BUILT_FUNCTIONS_ENV), else the entry.
      const mod = (await import(functionModuleUrl(source.entry))) as { default?: AdmissionWebhook | ConversionWebhook };
      loaded.push({ source, webhook: mod.default });
    } catch (error) {
      loaded.push({ source, thrown: { error } });
    }
  }
  // The CRDs the project ships: admission functions on their resources get objects of their schemas.
  const crds: unknown[] = [];
  for (const { webhook } of loaded) {
    const reg = webhook?.registration;
    if (reg?.type !== 'conversion' || !reg.crdManifest) continue;
    const file = resolve(root, reg.crdManifest);
    if (existsSync(file)) crds.push(...(await readCrds(file)));
  }
  for (const { source, webhook, thrown } of loaded) {
    describe(`${source.name} conformance`, () => {
      if (thrown) {
        it('loads', () => {
          throw loadFailure(relative(root, source.entry), thrown.error);
        });
        return;
      }
      if (!webhook?.registration || typeof webhook.handler !== 'function') {
        it('exports its webhook', () => {
          assert.fail(
            `${relative(root, source.entry)} exports no default registration: end it with ` +
              '`export default defineValidatingWebhook({...})` (or defineMutatingWebhook, defineConversionWebhook)',
          );
        });
        return;
      }
      const sample = options.samples?.[source.name];
      for (const check of conformanceChecks(webhook, { root, crds, ...(sample ? { sample } : {}) })) {
        it(check.name, async (t) => {
          const outcome = await check.run();
          if (outcome) t.skip(outcome.skipped);
        });
      }
    });
  }
}
