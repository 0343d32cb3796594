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
import { invoke } from './invoke.ts';
import { admissionReview, conversionReview } from './reviews.ts';
import { kindOf } from '../harness/reviews.ts';

export { kindOf };

/** One check of the conformance suite: a name for the report and the assertion to run. */
export interface ConformanceCheck {
  name: string;
  run: () => Promise<void>;
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

function targets(reg: AdmissionRegistration, sample: KubeObject | undefined): Target[] {
  const out: Target[] = [];
  const seen = new Set<string>();
  for (const rule of reg.rules) {
    const group = pick(rule.apiGroups, ANY_GROUP);
    const version = pick(rule.apiVersions, ANY_VERSION);
    const [resourcePart = ANY_RESOURCE, sub] = pick(rule.resources, ANY_RESOURCE).split('/');
    const resource = resourcePart === '*' ? ANY_RESOURCE : resourcePart;
    const subResource = sub === undefined ? undefined : sub === '*' ? ANY_SUBRESOURCE : sub;
    const operations = rule.operations.includes('*') ? OBJECT_OPERATIONS : rule.operations.filter((o): o is Operation => o !== '*' && o !== 'CONNECT');
    for (const operation of operations) {
      const key = [operation, group, version, resource, subResource].join('|');
      if (seen.has(key)) continue;
      seen.add(key);
      const object: KubeObject = sample ? structuredClone(sample) : sampleFor(reg, rule, group, version, resource);
      out.push({ operation, group, version, resource, ...(subResource ? { subResource } : {}), object });
    }
  }
  return out;
}

function pick(values: string[], wildcard: string): string {
  const first = values[0] ?? '*';
  return first === '*' ? wildcard : first;
}

function sampleFor(reg: AdmissionRegistration, rule: RuleWithOperations, group: string, version: string, resource: string): KubeObject {
  const kind = kindOf(resource);
  const clusterScoped = rule.scope === 'Cluster' || kind === 'Namespace';
  const metadata: NonNullable<KubeObject['metadata']> = { name: 'conformance', uid: '5f7b1d5e-0000-4000-8000-000000000001' };
  if (!clusterScoped) metadata.namespace = 'default';
  if (reg.objectSelector?.matchLabels) metadata.labels = { ...reg.objectSelector.matchLabels };
  return { apiVersion: group ? `${group}/${version}` : version, kind, metadata };
}

function admissionChecks(webhook: AdmissionWebhook, options: ConformanceOptions): ConformanceCheck[] {
  const reg = webhook.registration;
  const list = targets(reg, options.sample);
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
          assert.deepEqual(second.patch, [], `${reg.name}: ${t.operation} ${t.resource}: not idempotent: the second call patched ${JSON.stringify(second.patch)}`);
        }
      },
    });
  }
  return checks;
}

/** Versions and kind of a conversion function: from its registration, else from its CRD manifest. */
function conversionTarget(reg: ConversionRegistration, root: string): { group: string; kind: string; versions: string[] } {
  const dot = reg.crd.indexOf('.');
  const plural = dot < 0 ? reg.crd : reg.crd.slice(0, dot);
  const group = dot < 0 ? ANY_GROUP : reg.crd.slice(dot + 1);
  let kind = kindOf(plural);
  let versions = reg.versions ?? [];
  if (reg.crdManifest) {
    const file = resolve(root, reg.crdManifest);
    if (!existsSync(file)) throw new assert.AssertionError({ message: `${reg.name}: crdManifest ${reg.crdManifest} not found under ${root}` });
    const crd = parseAllDocuments(readFileSync(file, 'utf8'))
      .map((d) => d.toJS() as { kind?: string; spec?: { names?: { kind?: string }; versions?: Array<{ name: string; served?: boolean }> } })
      .find((d) => d?.kind === 'CustomResourceDefinition');
    kind = crd?.spec?.names?.kind ?? kind;
    if (!reg.versions) versions = (crd?.spec?.versions ?? []).filter((v) => v.served !== false).map((v) => v.name);
  }
  return { group, kind, versions };
}

function conversionChecks(webhook: ConversionWebhook, options: ConformanceOptions): ConformanceCheck[] {
  const reg = webhook.registration;
  const root = options.root ?? process.cwd();
  const sampleAt = (group: string, kind: string, version: string): KubeObject => ({
    ...(options.sample ? structuredClone(options.sample) : { kind, metadata: { name: 'conformance', namespace: 'default', uid: '5f7b1d5e-0000-4000-8000-000000000002' } }),
    apiVersion: `${group}/${version}`,
  });
  return [
    {
      name: `answers ${reg.conversionReviewVersions.join(' and ')} ConversionReviews between its versions, as the API server requires`,
      run: async () => {
        const { group, kind, versions } = conversionTarget(reg, root);
        for (const version of reg.conversionReviewVersions) {
          const [from = ANY_VERSION, to = from] = versions;
          const review = conversionReview([sampleAt(group, kind, from)], `${group}/${to}`, { version });
          const result = await invoke(webhook, review);
          assert.equal(result.status, 'Success', `${reg.name}: ${group}/${from} → ${group}/${to} (apiextensions.k8s.io/${version}) failed: ${result.message}`);
          assert.equal(result.convertedObjects[0]?.apiVersion, `${group}/${to}`, `${reg.name}: the converted object is not at ${group}/${to}`);
        }
      },
    },
    {
      name: 'round-trips an object through every version it declares',
      run: async () => {
        const { group, kind, versions } = conversionTarget(reg, root);
        assert.ok(
          versions.length,
          `${reg.name}: declares no versions: give the registration \`versions\` (or a crdManifest listing them) so conversions can be checked`,
        );
        for (const version of versions) {
          await expectRoundTrip(webhook, sampleAt(group, kind, version), versions.map((v) => `${group}/${v}`));
        }
      },
    },
  ];
}

/**
 * The checks any webhook gets for free: it answers v1 and v1beta1 reviews (those it
 * registers) of what its rules match, with the uid echoed and the API server's response
 * rules kept; a mutating webhook is idempotent; a conversion webhook round-trips objects
 * through the versions it declares.
 */
export function conformanceChecks(webhook: AdmissionWebhook | ConversionWebhook, options: ConformanceOptions = {}): ConformanceCheck[] {
  return webhook.registration.type === 'conversion'
    ? conversionChecks(webhook as ConversionWebhook, options)
    : admissionChecks(webhook as AdmissionWebhook, options);
}

/** Runs every conformance check of a webhook; throws an AssertionError naming the first that fails. */
export async function expectConformance(webhook: AdmissionWebhook | ConversionWebhook, options: ConformanceOptions = {}): Promise<void> {
  for (const check of conformanceChecks(webhook, options)) await check.run();
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
  for (const source of sources) {
    const mod = (await import(pathToFileURL(source.entry).href)) as { default?: AdmissionWebhook | ConversionWebhook };
    const webhook = mod.default;
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
      for (const check of conformanceChecks(webhook, { root, ...(sample ? { sample } : {}) })) it(check.name, check.run);
    });
  }
}
