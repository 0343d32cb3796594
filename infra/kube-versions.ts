/**
 * What each Kubernetes version's API server knows of the manifests klw writes: the fields of
 * admissionregistration.k8s.io/v1 webhooks by the version that introduced them, the feature
 * gates that bring them earlier, and the labels the defaults rely on. `klw manifests
 * --kube-version` writes only what the target knows; lint says what is lost.
 */
import {
  checkInFunctionConditions,
  checkMatchConditions,
  type ConditionProblem,
} from '../lib/matchconditions/rules.ts';
import type { AdmissionRegistration, MatchCondition, Registration } from '../lib/internal.ts';
import { KlwError } from './errors.ts';
import type { Finding } from './lint/finding.ts';
import type { KubeDocument } from './output.ts';

/** A Kubernetes minor version, `1.20`. */
export interface KubeVersion {
  major: number;
  minor: number;
}

/** The cluster klw writes for: its version and the feature gates turned on beyond the defaults. */
export interface KubeTarget {
  version: KubeVersion;
  featureGates?: Record<string, boolean>;
}

/** The first version serving admissionregistration.k8s.io/v1 and apiextensions.k8s.io/v1. */
export const V1_APIS_SINCE = 16;
/** The version from which every namespace carries `kubernetes.io/metadata.name` (NamespaceDefaultLabelName). */
export const NAMESPACE_NAME_LABEL_SINCE = 21;

/**
 * Webhook fields newer than the v1 API: the version from which they are on by default, and
 * the alpha feature gate that brings them earlier.
 */
export const WEBHOOK_FIELDS: Array<{ field: string; since: number; gate?: { name: string; since: number } }> = [
  // Alpha in 1.27 behind the gate, beta (on by default) in 1.28, GA in 1.30.
  { field: 'matchConditions', since: 28, gate: { name: 'AdmissionWebhookMatchConditions', since: 27 } },
];

/** Parses `1.20`, `v1.20` or `v1.20.2`; throws on anything else. */
export function parseKubeVersion(text: string): KubeVersion {
  const match = /^v?(\d+)\.(\d+)(?:\.\d+)?$/.exec(text.trim());
  if (!match) throw new KlwError(`--kube-version ${JSON.stringify(text)}: give a Kubernetes version such as 1.28`);
  return { major: Number(match[1]), minor: Number(match[2]) };
}

/**
 * A Kubernetes release as a cluster's version is written: `1.<minor>` or `v1.<minor>.<patch>`,
 * digits without leading zeros. Every release so far is 1.x; two digits of minor (at most 1.99)
 * are decades of releases at three a year, so longer numbers are typing errors, not versions,
 * and never rounded.
 */
const RELEASE_VERSION = /^v?(\d+)\.(\d+)(?:\.(\d+))?$/;

/** Why `text` is not a Kubernetes release version, or undefined when it is one (see RELEASE_VERSION). */
export function releaseVersionProblem(text: string): string | undefined {
  const match = RELEASE_VERSION.exec(text);
  if (!match) return 'is not a Kubernetes version';
  const [, major, minor, patch] = match;
  if (major !== '1') return 'is not a Kubernetes version: every Kubernetes release is 1.x';
  if (!/^(0|[1-9]\d?)$/.test(minor!))
    return 'is not a Kubernetes version: the minor version is 0 to 99, without leading zeros';
  if (patch !== undefined && !/^(0|[1-9]\d{0,2})$/.test(patch))
    return 'is not a Kubernetes version: the patch version is 0 to 999, without leading zeros';
  return undefined;
}

/** `--kube-version` as the "X.Y" a registration's kubernetesVersion takes (v1.30.2 is 1.30). */
export function kubeVersionText(text: string): string {
  const { major, minor } = parseKubeVersion(text);
  return `${major}.${minor}`;
}

/**
 * The webhooks with their registrations' kubernetesVersion set to `version` (`--kube-version`), so
 * their matchConditions are compiled and evaluated in that version's CEL environment.
 */
export function withKubeVersion<W extends { registration: object }>(webhooks: W[], version: string | undefined): W[] {
  if (!version) return webhooks;
  const kubernetesVersion = kubeVersionText(version);
  return webhooks.map((w) => ({ ...w, registration: { ...w.registration, kubernetesVersion } }));
}

/** Parses `Gate=true,Other=false` (kube-apiserver's --feature-gates syntax). */
export function parseFeatureGates(text: string): Record<string, boolean> {
  const gates: Record<string, boolean> = {};
  for (const item of text
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean)) {
    const match = /^([A-Za-z0-9]+)=(true|false)$/.exec(item);
    if (!match) throw new KlwError(`--feature-gates: ${JSON.stringify(item)} is not Name=true or Name=false`);
    gates[match[1]!] = match[2] === 'true';
  }
  return gates;
}

/** The target from the CLI options, or undefined without --kube-version. */
export function kubeTargetFrom(options: { kubeVersion?: string; featureGates?: string }): KubeTarget | undefined {
  if (!options.kubeVersion) {
    if (options.featureGates) throw new KlwError('--feature-gates needs --kube-version');
    return undefined;
  }
  return {
    version: parseKubeVersion(options.kubeVersion),
    featureGates: options.featureGates ? parseFeatureGates(options.featureGates) : {},
  };
}

function minorOf(target: KubeTarget): number {
  // Every Kubernetes release so far is 1.x; a 2.x would know all of 1.x.
  return target.version.major > 1 ? Number.POSITIVE_INFINITY : target.version.minor;
}

/** True when the target's API server keeps `field` of a webhook. */
export function knowsWebhookField(target: KubeTarget, field: string): boolean {
  const rule = WEBHOOK_FIELDS.find((f) => f.field === field);
  if (!rule) return true;
  const minor = minorOf(target);
  if (minor >= rule.since) return true;
  return !!rule.gate && minor >= rule.gate.since && target.featureGates?.[rule.gate.name] === true;
}

/** The manifests for a target and what the target loses of them. */
export interface VersionedManifests {
  documents: KubeDocument[];
  findings: Finding[];
}

/** A webhook entry as a manifest holds it (generated, or read from a file). */
interface WebhookView {
  [field: string]: unknown;
  name: string;
  namespaceSelector?: SelectorView;
}

/** A label selector as written. */
interface SelectorView {
  matchLabels?: Record<string, unknown> | null;
  matchExpressions?: Array<{ key?: unknown }> | null;
}

/** A manifest as forKubeVersion reads it. */
interface WebhookConfigurationView extends KubeDocument {
  kind?: unknown;
  apiVersion?: unknown;
  metadata?: { name?: string } | null;
  webhooks?: unknown;
}

/**
 * Rewrites webhook configurations for the target's API server: fields it does not know are
 * left out, each with a warning; a target without the v1 APIs is an error. `enforced` names
 * the webhooks whose functions enforce their matchConditions themselves.
 */
export function forKubeVersion(
  documents: readonly KubeDocument[],
  target: KubeTarget,
  enforced: ReadonlySet<string> = new Set(),
): VersionedManifests {
  const findings: Finding[] = [];
  const shown = `${target.version.major}.${target.version.minor}`;
  const out: KubeDocument[] = [];
  for (const document of documents) {
    // Read with care: a webhook configuration's fields are checked where they matter.
    const doc = document as WebhookConfigurationView;
    const isWebhookConfig =
      doc?.kind === 'MutatingWebhookConfiguration' || doc?.kind === 'ValidatingWebhookConfiguration';
    if (minorOf(target) < V1_APIS_SINCE && (isWebhookConfig || doc?.kind === 'CustomResourceDefinition')) {
      findings.push({
        level: 'error',
        rule: 'kube-version-api',
        subject: doc.metadata?.name ?? String(doc.kind),
        message: `${doc.apiVersion} ${doc.kind} needs Kubernetes 1.${V1_APIS_SINCE} or later; ${shown} does not serve it`,
      });
    }
    if (!isWebhookConfig || !Array.isArray(doc.webhooks)) {
      out.push(doc);
      continue;
    }
    const webhooks = (doc.webhooks as WebhookView[]).map((webhook) => {
      const kept: Record<string, unknown> = { ...webhook };
      for (const rule of WEBHOOK_FIELDS) {
        if (webhook[rule.field] === undefined || knowsWebhookField(target, rule.field)) continue;
        delete kept[rule.field];
        const when = `Kubernetes 1.${rule.since}+${rule.gate ? ` (1.${rule.gate.since} with --feature-gates ${rule.gate.name}=true)` : ''}`;
        const consequence =
          rule.field !== 'matchConditions'
            ? ''
            : enforced.has(webhook.name)
              ? '; the function enforces them itself (enforceMatchConditions)'
              : '; the API server calls the webhook for everything its rules match (enforceMatchConditions makes the function skip what they exclude)';
        findings.push({
          level: 'warning',
          rule: 'kube-version-field',
          subject: webhook.name,
          message: `${rule.field} left out: ${shown} does not know the field, which needs ${when}${consequence}`,
        });
      }
      if (minorOf(target) < NAMESPACE_NAME_LABEL_SINCE && usesNamespaceNameLabel(webhook.namespaceSelector)) {
        findings.push({
          level: 'warning',
          rule: 'kube-version-namespace-label',
          subject: webhook.name,
          message: `namespaceSelector uses kubernetes.io/metadata.name, which namespaces carry from Kubernetes 1.${NAMESPACE_NAME_LABEL_SINCE}; on ${shown} label them by hand (kubectl label namespace kube-system kubernetes.io/metadata.name=kube-system) or kube-system is not excluded`,
        });
      }
      return kept;
    });
    out.push({ ...doc, webhooks });
  }
  return { documents: out, findings };
}

function usesNamespaceNameLabel(selector: SelectorView | undefined): boolean {
  return (
    Object.hasOwn(selector?.matchLabels ?? {}, 'kubernetes.io/metadata.name') ||
    (selector?.matchExpressions ?? []).some((e) => e.key === 'kubernetes.io/metadata.name')
  );
}

/** The webhook names whose functions enforce their matchConditions in-function. */
export function enforcedWebhooks(registrations: Registration[]): Set<string> {
  return new Set(
    registrations
      .filter((r): r is AdmissionRegistration => r.type !== 'conversion' && r.enforceMatchConditions === true)
      .map((r) => r.webhookName),
  );
}

/** Lint findings of the registrations' in-function enforcement (conditions it cannot evaluate). */
export function lintInFunctionConditions(registrations: Registration[]): Finding[] {
  return registrations.flatMap((r) =>
    r.type !== 'conversion' && r.enforceMatchConditions
      ? checkInFunctionConditions(r.matchConditions).map((p) => ({ ...p, subject: r.webhookName }))
      : [],
  );
}

/** Why the API server of `version` (default the newest) would not compile a condition being created, if it would not. */
export function compileProblem(condition: MatchCondition, version?: KubeVersion): ConditionProblem | undefined {
  return checkMatchConditions([condition], version ? { kubeVersion: version } : {}).find(
    (p) => p.rule === 'match-conditions-compile',
  );
}

/** Rule of a matchCondition that the registration's own `kubernetesVersion` cannot compile. */
export const REGISTRATION_VERSION_RULE = 'match-conditions-kubernetes-version';

/**
 * The matchConditions each registration's own `kubernetesVersion` refuses (a library or syntax
 * newer than it), each an error naming the function, the condition and the version, as the test
 * kit refuses them. Only where the conditions run at that version: its API server keeps the field,
 * or the function enforces them itself. A condition no version compiles is lint's own error.
 */
export function registrationVersionFindings(registrations: Registration[]): Finding[] {
  const findings: Finding[] = [];
  for (const reg of registrations) {
    if (reg.type === 'conversion' || !reg.kubernetesVersion || !reg.matchConditions?.length) continue;
    const version = parseKubeVersion(reg.kubernetesVersion);
    if (!knowsWebhookField({ version }, 'matchConditions') && !reg.enforceMatchConditions) continue;
    for (const condition of reg.matchConditions) {
      const problem = compileProblem(condition, version);
      if (!problem || compileProblem(condition)) continue;
      findings.push({
        level: 'error',
        rule: REGISTRATION_VERSION_RULE,
        subject: reg.name,
        message:
          `kubernetesVersion ${reg.kubernetesVersion} (raise it, or use only what ${reg.kubernetesVersion} has): ` +
          problem.message,
      });
    }
  }
  return findings;
}
