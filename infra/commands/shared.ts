// What several commands share: reporting lint findings, reading the endpoint options, and
// generating the linted manifests (manifests, start-api and deploy).
import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { KlwError } from '../errors.ts';
import { type FunctionEntry, loadFunctions } from '../functions.ts';
import { formatFinding, lintDocuments, PLACEHOLDER_RULE, type Finding } from '../lint.ts';
import {
  DEFAULT_CONFIGURATION_NAME,
  generateManifests,
  unknownCrds,
  type Endpoints,
  type ManifestSet,
} from '../manifests.ts';
import type { FleetCluster } from '../fleet/file.ts';
import type { KubeTarget } from '../kube-versions.ts';
import { planPolicies } from '../policies/cluster.ts';
import { say } from './context.ts';

/** The endpoint options of manifests (and the CA bundle of deploy). */
export interface EndpointOptions {
  /** https://host[:port][/stage]; each function at <base>/<name>. */
  baseUrl?: string;
  /** A JSON file of function name to URL. */
  functionUrls?: string;
  /** A PEM file of the CA that signed the endpoint certificate. */
  caBundle?: string;
}

/** Prints lint findings; throws when any is an error. */
export function reportFindings(findings: Finding[]): void {
  for (const f of findings) say(formatFinding(f));
  const errors = findings.filter((f) => f.level === 'error').length;
  if (errors) throw new KlwError(`${errors} lint error${errors > 1 ? 's' : ''}; fix them before registering`);
}

/** Reads the endpoint options shared by manifests, start-api and deploy. */
export function endpointsFrom(options: EndpointOptions): Endpoints {
  const endpoints: Endpoints = {};
  if (options.baseUrl) endpoints.baseUrl = options.baseUrl;
  if (options.functionUrls) {
    const text = readFileSync(options.functionUrls, 'utf8');
    try {
      endpoints.functionUrls = JSON.parse(text) as Record<string, string>;
    } catch {
      throw new KlwError(`${options.functionUrls} is not JSON ({ "function-name": "https://..." })`);
    }
  }
  if (options.caBundle) {
    const pem = readFileSync(options.caBundle, 'utf8');
    if (!pem.includes('-----BEGIN CERTIFICATE-----'))
      throw new KlwError(`${options.caBundle} holds no PEM certificate`);
    endpoints.caBundlePem = pem;
  }
  return endpoints;
}

/** Which cluster manifestsFor writes for: a fleet cluster, or the one --kube-version describes. */
export interface ManifestTarget {
  crdPatches?: boolean;
  /** The project's functions, when the caller has loaded them (a fleet's clusters share one load). */
  functions?: FunctionEntry[];
  cluster?: FleetCluster;
  target?: KubeTarget;
}

/**
 * Generates manifests for every function and lints them; the shared core of manifests, start-api
 * and deploy. Policies the cluster evaluates natively are written as their policy and binding,
 * the others as webhooks; a line per policy says which.
 */
export async function manifestsFor(
  root: string,
  endpoints: Endpoints,
  name = DEFAULT_CONFIGURATION_NAME,
  options: ManifestTarget = {},
): Promise<ManifestSet> {
  const functions = options.functions ?? (await loadFunctions(root));
  if (!functions.length) throw new KlwError(`no functions under ${resolve(root, 'functions')}`);
  // With --crd-patches a CRD installed otherwise gets its patch; without, its conversion would be left out unsaid.
  const unknown = options.crdPatches ? [] : unknownCrds(functions.map((f) => f.registration));
  if (unknown.length) throw new KlwError(unknown.map((u) => u.message).join('\n'));
  const plan = planPolicies(functions, {
    root,
    ...(options.cluster ? { cluster: options.cluster } : {}),
    ...(options.target ? { target: options.target } : {}),
  });
  const set = generateManifests(root, plan.webhooks, endpoints, name);
  // The placeholder is there when asked for (klw manifests says so): the API server refuses it, as meant.
  reportFindings(lintDocuments(set.documents).filter((f) => f.rule !== PLACEHOLDER_RULE));
  for (const line of plan.lines) say(line);
  set.documents.push(...(plan.objects as unknown as Array<Record<string, unknown>>));
  return set;
}

/** The minor of a target Kubernetes version (a 2.x would serve what the newest 1.x does). */
export function kubeMinor(target: { version: { major: number; minor: number } }): number {
  return target.version.major > 1 ? Number.POSITIVE_INFINITY : target.version.minor;
}
