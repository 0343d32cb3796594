import assert from 'node:assert/strict';
import { existsSync, readFileSync } from 'node:fs';
import { relative, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { parseAllDocuments } from 'yaml';
import type { AdmissionWebhook } from '../admission/webhook.ts';
import type { ConversionWebhook } from '../conversion/webhook.ts';
import type { AdmissionRegistration, ConversionRegistration, RuleWithOperations } from '../registration.ts';
import type { KubeObject, Operation } from '../review/schemas.ts';
import { findFunctions, noFunctionsMessage } from '../harness/discover.ts';
import { expectRoundTrip } from './chain.ts';
import { invoke } from '../harness/invoke.ts';
import { admissionReview, conversionReview } from '../harness/reviews.ts';
import { kindOf } from '../harness/reviews.ts';

/**
 * One check of the conformance suite: a name for the report and the assertion to run. `run`
 * resolves to a reason when the check could not be made with a generated object (a sample is
 * needed), and rejects with an AssertionError when the webhook fails it.
 */
export interface ConformanceCheck {
  name: string;
  // biome-ignore lint/suspicious/noConfusingVoidType: a check that passes returns nothing.
  run: () => Promise<void | { skipped: string }>;
}

/** How to give a function a sample of one's own, for the end of every conformance message. */
export function sampleHint(name: string): string {
  return (
    'to send an object of your own instead of the generated one: ' +
    `describeConformance({ samples: { ${JSON.stringify(name)}: { apiVersion, kind, metadata, ... } } }), ` +
    'or expectConformance(webhook, { sample })'
  );
}

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

/** Options of the conformance checks. */
export interface ConformanceOptions {
  /** Project folder that `crdManifest` paths are relative to; default the working directory. */
  root?: string;
  /**
   * An object to send instead of the generated one (`apiVersion`, `kind`, `metadata` only),
   * for functions that need more to say anything.
   */
  sample?: KubeObject;
  /**
   * CustomResourceDefinitions (parsed manifests) whose schemas objects of their resources are
   * generated from; describeConformance passes those of the project's conversion functions.
   */
  crds?: unknown[];
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

/** The CRDs in a manifest file (none when it cannot be read as YAML). */
function readCrds(file: string): unknown[] {
  try {
    return parseAllDocuments(readFileSync(file, 'utf8'))
      .map((d) => d.toJS() as CrdShape | null)
      .filter((d) => d?.kind === 'CustomResourceDefinition');
  } catch {
    return [];
  }
}

// Stand-ins for wildcards in rules: any concrete value is one the webhook must answer.
const ANY_GROUP = 'example.com';
const ANY_VERSION = 'v1';
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
            throw new assert.AssertionError({ message: `${reg.name}: ${what}: ${(err as Error).message}` });
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

/** What the conversion checks send: group, kind and versions, and each version's schema where the CRD gives one. */
interface ConversionTarget {
  group: string;
  kind: string;
  versions: string[];
  schemas: Map<string, unknown>;
}

/** A generated value as an object's fields: none unless it is a mapping. */
function asFields(value: unknown): Record<string, unknown> {
  return value && typeof value === 'object' && !Array.isArray(value) ? (value as Record<string, unknown>) : {};
}

/** Versions and kind of a conversion function (from its registration, else its CRD manifest), and its schemas. */
function conversionTarget(reg: ConversionRegistration, root: string): ConversionTarget {
  const dot = reg.crd.indexOf('.');
  const plural = dot < 0 ? reg.crd : reg.crd.slice(0, dot);
  const group = dot < 0 ? ANY_GROUP : reg.crd.slice(dot + 1);
  let kind = kindOf(plural);
  let versions = reg.versions ?? [];
  const schemas = new Map<string, unknown>();
  if (reg.crdManifest) {
    const file = resolve(root, reg.crdManifest);
    if (!existsSync(file))
      throw new assert.AssertionError({
        message: `${reg.name}: crdManifest ${reg.crdManifest} not found under ${root}`,
      });
    type Version = { name: string; served?: boolean; schema?: { openAPIV3Schema?: unknown } };
    const crd = parseAllDocuments(readFileSync(file, 'utf8'))
      .map((d) => d.toJS() as { kind?: string; spec?: { names?: { kind?: string }; versions?: Version[] } })
      .find((d) => d?.kind === 'CustomResourceDefinition');
    kind = crd?.spec?.names?.kind ?? kind;
    const listed = Array.isArray(crd?.spec?.versions) ? crd.spec.versions : [];
    if (!reg.versions) versions = listed.filter((v) => v?.served !== false).map((v) => v.name);
    for (const v of listed) if (v?.schema?.openAPIV3Schema) schemas.set(v.name, v.schema.openAPIV3Schema);
  }
  return { group, kind, versions, schemas };
}

function conversionChecks(webhook: ConversionWebhook, options: ConformanceOptions): ConformanceCheck[] {
  const reg = webhook.registration;
  const root = options.root ?? process.cwd();
  const generated = options.sample === undefined;
  /** The version of the sample given, when it is one of `versions` of `group`. */
  const ownVersion = (group: string, versions: string[]): string | undefined => {
    const apiVersion = options.sample?.apiVersion;
    return versions.find((v) => apiVersion === `${group}/${v}`);
  };
  const sampleAt = (group: string, kind: string, version: string, schemas: Map<string, unknown>): KubeObject => {
    if (options.sample) return { ...structuredClone(options.sample), apiVersion: `${group}/${version}` };
    // The CRD's schema for the version, where there is one: its required fields, of their types.
    const object = asFields(sampleFromSchema(schemas.get(version)));
    return {
      ...object,
      apiVersion: `${group}/${version}`,
      kind,
      metadata: { name: 'conformance', namespace: 'default', uid: '5f7b1d5e-0000-4000-8000-000000000002' },
    };
  };
  return [
    {
      name: `answers ${reg.conversionReviewVersions.join(' and ')} ConversionReviews between its versions, as the API server requires`,
      run: async () => {
        const { group, kind, versions, schemas } = conversionTarget(reg, root);
        for (const version of reg.conversionReviewVersions) {
          const own = ownVersion(group, versions);
          const from = own ?? versions[0] ?? ANY_VERSION;
          const to = versions.find((v) => v !== from) ?? from;
          const review = conversionReview([sampleAt(group, kind, from, schemas)], `${group}/${to}`, { version });
          // invoke checks the answer as the API server does: HTTP 200, apiVersion, uid echoed, schema, object count.
          const result = await invoke(webhook, review);
          // Refusing a generated object is a valid answer: the function may need fields it cannot guess.
          if (result.status === 'Failed' && generated) continue;
          assert.equal(
            result.status,
            'Success',
            `${reg.name}: ${group}/${from} → ${group}/${to} (apiextensions.k8s.io/${version}) failed: ${result.message}`,
          );
          assert.equal(
            result.convertedObjects[0]?.apiVersion,
            `${group}/${to}`,
            `${reg.name}: the converted object is not at ${group}/${to}`,
          );
        }
      },
    },
    {
      name: 'round-trips an object through every version it declares',
      run: async () => {
        const { group, kind, versions, schemas } = conversionTarget(reg, root);
        assert.ok(
          versions.length,
          `${reg.name}: declares no versions: give the registration \`versions\` (or a crdManifest listing them) so conversions can be checked`,
        );
        if (generated) {
          // A generated object the function refuses cannot be round-tripped: the check asks for one it converts.
          for (const from of versions) {
            for (const to of versions.filter((v) => v !== from)) {
              const review = conversionReview([sampleAt(group, kind, from, schemas)], `${group}/${to}`);
              const result = await invoke(webhook, review);
              if (result.status === 'Failed') {
                return {
                  skipped:
                    `${reg.name}: the generated ${kind} at ${group}/${from} could not be converted to ${group}/${to} ` +
                    `(${JSON.stringify(result.message ?? '')}), so the round trip needs an object it converts; ` +
                    sampleHint(reg.name),
                };
              }
            }
          }
        }
        // A sample at one of the versions is an object of that version only: the round trip starts there.
        const own = ownVersion(group, versions);
        for (const version of own ? [own] : versions) {
          await expectRoundTrip(
            webhook,
            sampleAt(group, kind, version, schemas),
            versions.map((v) => `${group}/${v}`),
          );
        }
        return undefined;
      },
    },
  ];
}

/** Deepest schema nesting a sample is generated for (CRD schemas are trees; a hostile one stops here). */
const SAMPLE_DEPTH = 32;

/** Longest string a sample pads to for `minLength` (a hostile schema could ask for gigabytes). */
const SAMPLE_MAX_LENGTH = 4096;

/** Values for string formats the API server checks (k8s.io/kube-openapi strfmt), one each. */
const FORMAT_SAMPLES: Record<string, string> = {
  'date-time': '2020-01-01T00:00:00Z',
  date: '2020-01-01',
  duration: '1s',
  byte: 'Y29uZm9ybWFuY2U=',
  email: 'conformance@example.com',
  hostname: 'conformance.example.com',
  ipv4: '192.0.2.1',
  ipv6: '2001:db8::1',
  cidr: '192.0.2.0/24',
  mac: '02:00:00:00:00:01',
  uri: 'https://conformance.example.com/',
  url: 'https://conformance.example.com/',
  uuid: '5f7b1d5e-0000-4000-8000-000000000003',
  password: 'conformance',
};

/**
 * The smallest value a structural schema (a CRD version's openAPIV3Schema) accepts, as far as it
 * can be known without a pattern engine: every required property, of its type, the first enum
 * value, the default, a value of the format, lengths and bounds kept. Undefined for no schema.
 */
export function sampleFromSchema(schema: unknown, depth = 0): unknown {
  if (!schema || typeof schema !== 'object' || Array.isArray(schema) || depth > SAMPLE_DEPTH) return undefined;
  const s = schema as Record<string, any>;
  if (Array.isArray(s.enum) && s.enum.length) return structuredClone(s.enum[0]);
  if (s.default !== undefined) return structuredClone(s.default);
  if (s['x-kubernetes-int-or-string'] === true) return 1;
  switch (s.type) {
    case 'object': {
      const out: Record<string, unknown> = {};
      const properties = asFields(s.properties);
      for (const name of Array.isArray(s.required) ? s.required : []) {
        if (typeof name !== 'string') continue;
        const value = sampleFromSchema(properties[name] ?? s.additionalProperties, depth + 1);
        out[name] = value === undefined ? {} : value;
      }
      return out;
    }
    case 'array': {
      const count = Number.isInteger(s.minItems) && s.minItems > 0 ? Math.min(s.minItems, SAMPLE_DEPTH) : 0;
      return Array.from({ length: count }, (_, i) => {
        const item = sampleFromSchema(s.items, depth + 1);
        // listType set (and unique items) need distinct members.
        return typeof item === 'string' ? `${item}${i || ''}` : typeof item === 'number' ? item + i : item;
      });
    }
    case 'string': {
      let value = FORMAT_SAMPLES[s.format as string] ?? 'conformance';
      if (Number.isInteger(s.maxLength) && value.length > s.maxLength) value = value.slice(0, s.maxLength);
      if (Number.isInteger(s.minLength) && value.length < s.minLength) {
        value = value.padEnd(Math.min(s.minLength, SAMPLE_MAX_LENGTH), 'x');
      }
      return value;
    }
    case 'integer':
    case 'number': {
      const min = typeof s.minimum === 'number' ? (s.exclusiveMinimum === true ? s.minimum + 1 : s.minimum) : undefined;
      const max = typeof s.maximum === 'number' ? (s.exclusiveMaximum === true ? s.maximum - 1 : s.maximum) : undefined;
      const value = min !== undefined ? min : max !== undefined && max < 1 ? max : 1;
      return s.type === 'integer' ? Math.ceil(value) : value;
    }
    case 'boolean':
      return false;
    default:
      return undefined;
  }
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
  type Loaded = { source: (typeof sources)[number]; webhook: AdmissionWebhook | ConversionWebhook | undefined };
  const loaded: Loaded[] = [];
  for (const source of sources) {
    const mod = (await import(pathToFileURL(source.entry).href)) as { default?: AdmissionWebhook | ConversionWebhook };
    loaded.push({ source, webhook: mod.default });
  }
  // The CRDs the project ships: admission functions on their resources get objects of their schemas.
  const crds = loaded.flatMap(({ webhook }) => {
    const reg = webhook?.registration;
    if (reg?.type !== 'conversion' || !reg.crdManifest) return [];
    const file = resolve(root, reg.crdManifest);
    return existsSync(file) ? readCrds(file) : [];
  });
  for (const { source, webhook } of loaded) {
    describe(`${source.name} conformance`, () => {
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
