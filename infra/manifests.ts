import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { parseAllDocuments } from 'yaml';
import {
  type AdmissionRegistration,
  type ConversionRegistration,
  type Registration,
  validateWebhookUrl,
} from '../lib/internal.ts';
import { KlwError } from './errors.ts';
import { PATH_SECRET_PLACEHOLDER, usesPathSecret } from './secrets/index.ts';
import { isRecord, valueAt } from './json.ts';

/** Where the functions are reachable. */
export interface Endpoints {
  /** `https://host[:port][/stage]`: every function at `<base>/<name>`. */
  baseUrl?: string;
  /** One URL per function name (Lambda function URLs). */
  functionUrls?: Record<string, string>;
  /** PEM of the CA that signed the endpoints' certificate; empty means the system roots. */
  caBundlePem?: string;
  /**
   * The path secret (or PATH_SECRET_PLACEHOLDER) appended to the URL of every function that
   * checks one (`<url>/<secret>`, see usesPathSecret); unset writes the URLs without it.
   */
  pathSecret?: string;
}

/** Name of the generated Mutating/ValidatingWebhookConfiguration objects. */
export const DEFAULT_CONFIGURATION_NAME = 'kube-lambda-webhooks';

/**
 * Checks a webhook URL by the API server's rules (k8s.io/apiserver util/webhook/validation.go,
 * with Go's URL parsing); returns the broken rules or undefined.
 */
export function checkWebhookUrl(url: string): string | undefined {
  const problems = validateWebhookUrl(url);
  return problems.length ? `url ${JSON.stringify(url)}: ${problems.join('; ')}` : undefined;
}

/** The URL of one function under the given endpoints; throws naming the broken rule. */
export function functionUrl(name: string, endpoints: Endpoints): string {
  let url: string | undefined;
  if (endpoints.functionUrls) {
    url = endpoints.functionUrls[name];
    if (!url) throw new KlwError(`no URL for function "${name}" in the function URL list`);
  } else if (endpoints.baseUrl) {
    url = `${endpoints.baseUrl.replace(/\/+$/, '')}/${name}`;
  } else {
    throw new KlwError('give a base URL (--base-url) or function URLs (--function-urls)');
  }
  const problem = checkWebhookUrl(url);
  if (problem) throw new KlwError(`function ${name}: ${problem}`);
  return url;
}

/** The URL registered for a function: its URL, plus `/<secret>` when it checks a path secret and one is given. */
export function registeredUrl(reg: Registration, endpoints: Endpoints): string {
  const url = functionUrl(reg.name, endpoints);
  if (!endpoints.pathSecret || !usesPathSecret(reg)) return url;
  const withSecret = `${url.replace(/\/+$/, '')}/${endpoints.pathSecret}`;
  // The placeholder breaks the URL rules on purpose; the secret itself is never part of an error message.
  if (endpoints.pathSecret !== PATH_SECRET_PLACEHOLDER && checkWebhookUrl(withSecret)) {
    throw new KlwError(`function ${reg.name}: the path secret does not fit in its URL`);
  }
  return withSecret;
}

function clientConfig(reg: Registration, endpoints: Endpoints): Record<string, string> {
  const config: Record<string, string> = { url: registeredUrl(reg, endpoints) };
  if (endpoints.caBundlePem) config.caBundle = Buffer.from(endpoints.caBundlePem, 'utf8').toString('base64');
  return config;
}

/** One entry of `webhooks:` in an admissionregistration.k8s.io/v1 configuration. */
export function admissionWebhookEntry(reg: AdmissionRegistration, endpoints: Endpoints): Record<string, unknown> {
  const entry: Record<string, unknown> = {
    name: reg.webhookName,
    clientConfig: clientConfig(reg, endpoints),
    rules: reg.rules,
    namespaceSelector: reg.namespaceSelector,
  };
  if (reg.objectSelector) entry.objectSelector = reg.objectSelector;
  // Only written when declared: API servers before v1.28 do not know the field.
  if (reg.matchConditions?.length) entry.matchConditions = reg.matchConditions;
  entry.failurePolicy = reg.failurePolicy;
  entry.matchPolicy = reg.matchPolicy;
  entry.sideEffects = reg.sideEffects;
  entry.timeoutSeconds = reg.timeoutSeconds;
  entry.admissionReviewVersions = reg.admissionReviewVersions;
  if (reg.type === 'mutating') entry.reinvocationPolicy = reg.reinvocationPolicy ?? 'Never';
  return entry;
}

/** `spec.conversion` of a CRD served by a conversion function. */
export function conversionSpec(reg: ConversionRegistration, endpoints: Endpoints): Record<string, unknown> {
  return {
    strategy: 'Webhook',
    webhook: {
      conversionReviewVersions: reg.conversionReviewVersions,
      clientConfig: clientConfig(reg, endpoints),
    },
  };
}

/** A CRD conversion patch for `kubectl patch crd <name> --type merge`. */
export interface CrdPatch {
  crd: string;
  patch: { spec: { conversion: Record<string, unknown> } };
}

/** Everything `klw manifests` writes. */
export interface ManifestSet {
  /** Documents to apply, in order: CRDs, then mutating, then validating configurations. */
  documents: Array<Record<string, unknown>>;
  crdPatches: CrdPatch[];
}

function readCrd(root: string, reg: ConversionRegistration): Record<string, unknown> | undefined {
  if (!reg.crdManifest) return undefined;
  const file = join(root, reg.crdManifest);
  if (!existsSync(file)) throw new KlwError(`function ${reg.name}: CRD manifest ${reg.crdManifest} not found`);
  const docs: unknown[] = parseAllDocuments(readFileSync(file, 'utf8')).map((d) => d.toJS());
  const crd = docs
    .filter(isRecord)
    .find((d) => d.kind === 'CustomResourceDefinition' && valueAt(d, 'metadata', 'name') === reg.crd);
  if (!crd)
    throw new KlwError(`function ${reg.name}: ${reg.crdManifest} holds no CustomResourceDefinition named ${reg.crd}`);
  if (crd.apiVersion !== 'apiextensions.k8s.io/v1')
    throw new KlwError(`${reg.crdManifest}: CRD must be apiextensions.k8s.io/v1`);
  return crd;
}

/**
 * What is wrong with each conversion function whose CRD klw does not know (no `crdManifest`): the
 * manifests would hold no CRD with its `spec.conversion`, and the API server would never call it.
 */
export function unknownCrds(registrations: Registration[]): Array<{ name: string; message: string }> {
  return registrations
    .filter((r): r is ConversionRegistration => r.type === 'conversion' && !r.crdManifest)
    .map((r) => ({
      name: r.name,
      message:
        `functions/${r.name}: the registration has no crdManifest, so the manifests hold no CRD ${r.crd} ` +
        'with its spec.conversion and the API server never calls the function: ' +
        `set crdManifest: 'functions/${r.name}/crd.yaml' ` +
        "(the CRD's manifest, from the project root), or for a CRD installed otherwise write its patch with " +
        'klw manifests --crd-patches <dir>',
    }));
}

/**
 * Builds the manifests for a set of registrations: one MutatingWebhookConfiguration and one
 * ValidatingWebhookConfiguration (webhooks ordered by name, the order the API server calls
 * mutating webhooks in), and for each conversion function its CRD with `spec.conversion`.
 */
export function generateManifests(
  root: string,
  registrations: Registration[],
  endpoints: Endpoints,
  name = DEFAULT_CONFIGURATION_NAME,
): ManifestSet {
  const documents: Array<Record<string, unknown>> = [];
  const crdPatches: CrdPatch[] = [];
  const labels = { 'app.kubernetes.io/managed-by': 'kube-lambda-webhooks' };
  for (const reg of registrations) {
    if (reg.type !== 'conversion') continue;
    const conversion = conversionSpec(reg, endpoints);
    crdPatches.push({ crd: reg.crd, patch: { spec: { conversion } } });
    const crd = readCrd(root, reg);
    if (crd) documents.push({ ...crd, spec: { ...Object(crd.spec), conversion } });
  }
  const byName = (a: AdmissionRegistration, b: AdmissionRegistration) => a.webhookName.localeCompare(b.webhookName);
  for (const [type, kind] of [
    ['mutating', 'MutatingWebhookConfiguration'],
    ['validating', 'ValidatingWebhookConfiguration'],
  ] as const) {
    const regs = registrations.filter((r): r is AdmissionRegistration => r.type === type).sort(byName);
    if (!regs.length) continue;
    documents.push({
      apiVersion: 'admissionregistration.k8s.io/v1',
      kind,
      metadata: { name, labels },
      webhooks: regs.map((r) => admissionWebhookEntry(r, endpoints)),
    });
  }
  return { documents, crdPatches };
}
