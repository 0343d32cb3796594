import { isDns1123Label, isDns1123Subdomain } from './k8s/names.ts';
import { plainRule, type TypedRule } from './rule-builder.ts';
import type { KubeObject } from './review/schemas.ts';

/** A label selector (`metav1.LabelSelector`). */
export interface LabelSelector {
  matchLabels?: Record<string, string>;
  matchExpressions?: Array<{ key: string; operator: 'In' | 'NotIn' | 'Exists' | 'DoesNotExist'; values?: string[] }>;
}

/** True when a label selector matches a set of labels (`metav1.LabelSelector` semantics). */
export function selectorMatches(selector: LabelSelector | undefined, labels: Record<string, string> = {}): boolean {
  if (!selector) return true;
  for (const [key, value] of Object.entries(selector.matchLabels ?? {})) if (labels[key] !== value) return false;
  for (const { key, operator, values = [] } of selector.matchExpressions ?? []) {
    const has = Object.hasOwn(labels, key);
    const ok =
      operator === 'In'
        ? has && values.includes(labels[key]!)
        : operator === 'NotIn'
          ? !has || !values.includes(labels[key]!)
          : operator === 'Exists'
            ? has
            : !has;
    if (!ok) return false;
  }
  return true;
}

/** A CEL condition the API server evaluates before calling the webhook (v1.30+). */
export interface MatchCondition {
  name: string;
  expression: string;
}

/** Lambda settings for one function, read by serverless.yml generation and the emulator. */
export interface LambdaSettings {
  /** Memory in MB; 128 is Lambda's smallest size. */
  memorySize?: number;
  /** Environment variables for the function. */
  environment?: Record<string, string>;
  /** Instances kept warm, for webhooks that must never cold start. */
  provisionedConcurrency?: number;
  /** Instruction set the function runs on; default `arm64` (Graviton), `x86_64` for code that needs it. */
  architecture?: LambdaArchitecture;
}

/** The instruction sets AWS Lambda runs functions on. */
export const LAMBDA_ARCHITECTURES = ['arm64', 'x86_64'] as const;

/** One of `LAMBDA_ARCHITECTURES`. */
export type LambdaArchitecture = (typeof LAMBDA_ARCHITECTURES)[number];

/** The rollout modes of a webhook's denials (ValidatingAdmissionPolicyBinding's `validationActions`). */
export const ENFORCEMENT_MODES = ['Deny', 'Warn', 'Audit'] as const;

/**
 * What happens to a denial: `Deny` rejects the request; `Warn` admits it with the denial as a
 * warning the client sees; `Audit` admits it with the denial in the audit annotation
 * `<webhookName>/would-deny`. Logs and the `WouldDeny` metric record it in both.
 */
export type Enforcement = (typeof ENFORCEMENT_MODES)[number];

/**
 * What a user declares for an admission webhook; everything but name and rules has a default.
 * `T` is the object type the rules say (rules from `on(...)`), else any object.
 */
export interface AdmissionRegistrationInput<T = KubeObject> {
  /** Function name: a DNS-1123 label, used as the Lambda name and the URL path. */
  name: string;
  /** Webhook name registered with the API server; default `<name>.webhooks.kube-lambda.dev`. */
  webhookName?: string;
  /** Which requests send the webhook a review: typed rules (`on(Pod).create()`) or plain ones. */
  rules: Array<TypedRule<T>>;
  namespaceSelector?: LabelSelector;
  objectSelector?: LabelSelector;
  matchConditions?: MatchCondition[];
  /**
   * The Kubernetes version ("1.30") whose CEL environment in-function enforcement compiles the
   * matchConditions with: a condition using a library newer than it fails by failurePolicy.
   * Default: the newest version supported.
   */
  kubernetesVersion?: string;
  /**
   * Also evaluate matchConditions inside the function (set by `enforceMatchConditions` from
   * `kube-lambda-webhooks/matchconditions`), for clusters that drop the field.
   */
  enforceMatchConditions?: boolean;
  failurePolicy?: 'Fail' | 'Ignore';
  matchPolicy?: 'Exact' | 'Equivalent';
  sideEffects?: 'None' | 'NoneOnDryRun';
  timeoutSeconds?: number;
  admissionReviewVersions?: Array<'v1' | 'v1beta1'>;
  /**
   * What a `deny(...)` of the function does: `Deny` (default), `Warn` or `Audit`. Overridden
   * without a code change by the environment: `KLW_ENFORCEMENT_<NAME>` (the function name
   * upper-cased, `-` as `_`), else `KLW_ENFORCEMENT`. Failures and `errored(...)` still
   * follow `failurePolicy`.
   */
  enforcement?: Enforcement;
  /** Mutating only: call again once if a later webhook changed the object. */
  reinvocationPolicy?: 'Never' | 'IfNeeded';
  /**
   * Caller authentication. `auto` (default): a bearer token when one is configured
   * (KLW_BEARER_TOKEN, KLW_BEARER_TOKEN_FILE, KLW_BEARER_TOKEN_SSM), else the path secret
   * (`<url>/<name>/<secret>`, KLW_PATH_SECRET or KLW_PATH_SECRET_SSM), and inside Lambda with
   * neither a misconfiguration; `bearer` or `path-secret`: always that one, a missing
   * setting is a misconfiguration; `none`: never checked.
   */
  auth?: 'auto' | 'bearer' | 'path-secret' | 'none';
  lambda?: LambdaSettings;
}

/** A complete admission registration, defaults applied. */
export interface AdmissionRegistration
  extends Required<
    Omit<
      AdmissionRegistrationInput,
      | 'objectSelector'
      | 'matchConditions'
      | 'kubernetesVersion'
      | 'enforceMatchConditions'
      | 'enforcement'
      | 'reinvocationPolicy'
      | 'lambda'
    >
  > {
  type: 'validating' | 'mutating';
  path: string;
  objectSelector?: LabelSelector;
  matchConditions?: MatchCondition[];
  /** The Kubernetes version whose CEL environment in-function enforcement uses, when set. */
  kubernetesVersion?: string;
  enforceMatchConditions?: boolean;
  /** Set when declared; `Deny` applies when it is not. */
  enforcement?: Enforcement;
  reinvocationPolicy?: 'Never' | 'IfNeeded';
  lambda: LambdaSettings;
}

/** What a user declares for a conversion webhook. */
export interface ConversionRegistrationInput {
  /** Function name: a DNS-1123 label, used as the Lambda name and the URL path. */
  name: string;
  /** The CRD served, `<plural>.<group>`. */
  crd: string;
  /** Path of the CRD manifest, relative to the repository root, into which conversion is merged. */
  crdManifest?: string;
  /** Budget for one ConversionReview; the API server allows conversion webhooks 30 s. */
  timeoutSeconds?: number;
  conversionReviewVersions?: Array<'v1' | 'v1beta1'>;
  /**
   * Caller authentication: `auto` (default) checks the path secret when one is configured (and
   * inside Lambda requires one); `path-secret` always; `none` never. The API server sends no
   * bearer token to conversion webhooks, only the URL.
   */
  auth?: 'auto' | 'path-secret' | 'none';
  /**
   * The CRD versions the function converts between (`v1beta1`, `v1`); the test kit's
   * conformance check round-trips objects through them. Default: those of `crdManifest`.
   */
  versions?: string[];
  lambda?: LambdaSettings;
}

/** A complete conversion registration, defaults applied. */
export interface ConversionRegistration
  extends Required<Omit<ConversionRegistrationInput, 'crdManifest' | 'versions' | 'lambda'>> {
  type: 'conversion';
  path: string;
  crdManifest?: string;
  versions?: string[];
  lambda: LambdaSettings;
}

/** Any registration. */
export type Registration = AdmissionRegistration | ConversionRegistration;

/**
 * Namespaces a webhook should never gate: the control plane's own (good practices,
 * "avoid operating on the kube-system namespace"). Matched through the
 * `kubernetes.io/metadata.name` label the API server sets on every namespace since v1.21;
 * `NotIn` also matches namespaces without the label, so older clusters are not excluded from.
 */
export const SYSTEM_NAMESPACES = ['kube-system', 'kube-node-lease'] as const;

/** The default namespaceSelector: everything but the system namespaces. */
export function defaultNamespaceSelector(): LabelSelector {
  return {
    matchExpressions: [{ key: 'kubernetes.io/metadata.name', operator: 'NotIn', values: [...SYSTEM_NAMESPACES] }],
  };
}

/**
 * Default webhook timeout in seconds: short, because the API server waits for the webhook on
 * the request path (the API server's own default is 10, its maximum 30).
 */
export const DEFAULT_TIMEOUT_SECONDS = 5;
/** Conversion calls have a fixed 30 s budget in the API server; answer well inside it. */
export const DEFAULT_CONVERSION_TIMEOUT_SECONDS = 10;

// A DNS-1123 label: what Lambda names, URL paths and Kubernetes names all accept.
function checkName(name: string): void {
  if (typeof name !== 'string' || !isDns1123Label(name)) {
    throw new TypeError(
      `webhook name ${JSON.stringify(name)} must be a DNS-1123 label (lower-case letters, digits and '-', at most 63)`,
    );
  }
}

// A CRD's name is `<plural>.<group>`, and the API server wants its group a domain with a dot.
function checkCrd(name: string, crd: unknown): void {
  if (typeof crd !== 'string' || !isDns1123Subdomain(crd) || crd.split('.').length < 3) {
    throw new TypeError(
      `function ${name}: crd must name the CustomResourceDefinition it converts, <plural>.<group> ` +
        `(crontabs.stable.example.com, its metadata.name), got ${JSON.stringify(crd)}`,
    );
  }
}

function checkTimeout(name: string, seconds: number): void {
  if (!Number.isInteger(seconds) || seconds < 1 || seconds > 30) {
    throw new TypeError(`function ${name}: timeoutSeconds must be a whole number from 1 to 30, got ${seconds}`);
  }
}

function checkLambda(name: string, settings: LambdaSettings | undefined): void {
  const architecture = settings?.architecture;
  if (architecture !== undefined && !(LAMBDA_ARCHITECTURES as readonly string[]).includes(architecture)) {
    throw new TypeError(
      `function ${name}: lambda.architecture must be one of ${LAMBDA_ARCHITECTURES.join(', ')}, got ${JSON.stringify(architecture)}`,
    );
  }
}

/** Applies the good-practice defaults to an admission registration. */
export function completeAdmissionRegistration<T>(
  type: 'validating' | 'mutating',
  input: AdmissionRegistrationInput<T>,
): AdmissionRegistration {
  checkName(input.name);
  const timeoutSeconds = input.timeoutSeconds ?? DEFAULT_TIMEOUT_SECONDS;
  checkTimeout(input.name, timeoutSeconds);
  checkLambda(input.name, input.lambda);
  const reg: AdmissionRegistration = {
    type,
    name: input.name,
    path: `/${input.name}`,
    webhookName: input.webhookName ?? `${input.name}.webhooks.kube-lambda.dev`,
    rules: Array.isArray(input.rules) ? input.rules.map(plainRule) : input.rules,
    namespaceSelector: input.namespaceSelector ?? defaultNamespaceSelector(),
    // Mutating webhooks fail open and validating ones fail closed (good practices).
    failurePolicy: input.failurePolicy ?? (type === 'mutating' ? 'Ignore' : 'Fail'),
    matchPolicy: input.matchPolicy ?? 'Equivalent',
    sideEffects: input.sideEffects ?? 'None',
    timeoutSeconds,
    admissionReviewVersions: input.admissionReviewVersions ?? ['v1', 'v1beta1'],
    auth: input.auth ?? 'auto',
    lambda: input.lambda ?? {},
  };
  if (input.objectSelector) reg.objectSelector = input.objectSelector;
  if (input.matchConditions) reg.matchConditions = input.matchConditions;
  if (input.kubernetesVersion !== undefined) {
    if (!/^\d+\.\d+$/.test(input.kubernetesVersion))
      throw new Error(
        `${input.name}: kubernetesVersion ${JSON.stringify(input.kubernetesVersion)} is not a version such as "1.30"`,
      );
    reg.kubernetesVersion = input.kubernetesVersion;
  }
  if (input.enforceMatchConditions) reg.enforceMatchConditions = true;
  if (input.enforcement !== undefined) {
    if (!(ENFORCEMENT_MODES as readonly string[]).includes(input.enforcement)) {
      throw new TypeError(
        `function ${input.name}: enforcement must be one of ${ENFORCEMENT_MODES.join(', ')}, got ${JSON.stringify(input.enforcement)}`,
      );
    }
    reg.enforcement = input.enforcement;
  }
  if (type === 'mutating') reg.reinvocationPolicy = input.reinvocationPolicy ?? 'Never';
  return reg;
}

/** Applies the defaults to a conversion registration. */
export function completeConversionRegistration(input: ConversionRegistrationInput): ConversionRegistration {
  checkName(input.name);
  checkCrd(input.name, input.crd);
  const timeoutSeconds = input.timeoutSeconds ?? DEFAULT_CONVERSION_TIMEOUT_SECONDS;
  checkTimeout(input.name, timeoutSeconds);
  checkLambda(input.name, input.lambda);
  const reg: ConversionRegistration = {
    type: 'conversion',
    name: input.name,
    path: `/${input.name}`,
    crd: input.crd,
    timeoutSeconds,
    conversionReviewVersions: input.conversionReviewVersions ?? ['v1', 'v1beta1'],
    auth: input.auth ?? 'auto',
    lambda: input.lambda ?? {},
  };
  if (input.crdManifest) reg.crdManifest = input.crdManifest;
  if (input.versions) {
    if (
      !input.versions.length ||
      new Set(input.versions).size !== input.versions.length ||
      input.versions.some((v) => typeof v !== 'string' || !isDns1123Label(v))
    ) {
      throw new TypeError(
        `function ${input.name}: versions must be distinct version names such as "v1beta1", got ${JSON.stringify(input.versions)}`,
      );
    }
    reg.versions = [...input.versions];
  }
  return reg;
}
