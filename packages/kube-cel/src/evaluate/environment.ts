/**
 * The CEL environment of webhook matchConditions, as the API server declares it: the variables
 * `object`, `oldObject`, `request`, `namespaceObject` and `authorizer`, the types they have, the
 * conversions cel-go has beyond the engine's, and the Kubernetes libraries, every evaluation metered.
 */
import { Duration, type Environment, UnsignedInt } from '../engine.ts';
import { needsLibraries } from '../libraries/names.ts';
import { AUTHORIZER, registerAuthorizer } from '../libraries/authorizer.ts';
import { registerTwoVariableComprehensions } from './comprehensions.ts';
import { registerLibraries } from '../libraries/all.ts';
import { installOptionalEntries, registerParserProbe } from './entries.ts';
import { registerOptionals } from './optionals.ts';
import { installMeter, registerMeterProbe } from '../cost/evaluation.ts';
import { MeteredEnvironment } from '../cost/meter.ts';
import { useEngineClasses, useUintClass } from './equality.ts';
import { useRuntimeTypes } from './conversions.ts';
import { registerTime, TIMESTAMP } from '../libraries/time.ts';
import { registerStringConversions } from '../libraries/string-conversions.ts';

/** The largest int64. */
const INT64_MAX = 9223372036854775807n;

/** The request's types as the API server declares them (AdmissionRequest and its parts). */
function registerRequestTypes(env: Environment): void {
  env
    .registerType('kubernetes.GroupVersionKind', { fields: { group: 'string', version: 'string', kind: 'string' } })
    .registerType('kubernetes.GroupVersionResource', {
      fields: { group: 'string', version: 'string', resource: 'string' },
    })
    .registerType('kubernetes.UserInfo', {
      fields: { username: 'string', uid: 'string', groups: 'list<string>', extra: 'map<string, list<string>>' },
    })
    .registerType('kubernetes.AdmissionRequest', {
      fields: {
        kind: 'kubernetes.GroupVersionKind',
        resource: 'kubernetes.GroupVersionResource',
        subResource: 'string',
        requestKind: 'kubernetes.GroupVersionKind',
        requestResource: 'kubernetes.GroupVersionResource',
        requestSubResource: 'string',
        name: 'string',
        namespace: 'string',
        operation: 'string',
        userInfo: 'kubernetes.UserInfo',
        dryRun: 'bool',
        options: 'dyn',
      },
    });
}

/**
 * The Namespace as the API server declares it (plugin/cel/compile.go, BuildNamespaceType).
 * Declared for webhook matchConditions too, and null there: only admission policies get the
 * request's Namespace object.
 */
function registerNamespaceTypes(env: Environment): void {
  env
    .registerType('kubernetes.NamespaceSpec', { fields: { finalizers: 'list<string>' } })
    .registerType('kubernetes.NamespaceCondition', {
      fields: { status: 'string', type: 'string', lastTransitionTime: TIMESTAMP, message: 'string', reason: 'string' },
    })
    .registerType('kubernetes.NamespaceStatus', {
      fields: { conditions: 'list<kubernetes.NamespaceCondition>', phase: 'string' },
    })
    .registerType('kubernetes.NamespaceMetadata', {
      fields: {
        name: 'string',
        generateName: 'string',
        namespace: 'string',
        labels: 'map<string, string>',
        annotations: 'map<string, string>',
        UID: 'string',
        creationTimestamp: TIMESTAMP,
        deletionGracePeriodSeconds: 'int',
        deletionTimestamp: TIMESTAMP,
        generation: 'int',
        resourceVersion: 'string',
        finalizers: 'list<string>',
      },
    })
    .registerType('kubernetes.Namespace', {
      fields: {
        metadata: 'kubernetes.NamespaceMetadata',
        spec: 'kubernetes.NamespaceSpec',
        status: 'kubernetes.NamespaceStatus',
      },
    });
}

/**
 * The parts of the environment an expression can reach only by naming them: `request` and its
 * types, `authorizer` and its library, `namespaceObject` and its types, the Kubernetes libraries,
 * `string(…)` as cel-go converts (the libraries have it too). An environment built for a scope (a
 * sum of these) answers the same as the full one for every expression that names nothing outside
 * it (scopeOf).
 */
export const SCOPE = { request: 1, authorizer: 2, namespace: 4, libraries: 8, strings: 16 } as const;
/** Every part: the environment as the API server declares it. */
export const FULL_SCOPE = SCOPE.request | SCOPE.authorizer | SCOPE.namespace | SCOPE.libraries | SCOPE.strings;

/** The variables every condition may read of `scope`; `object` and `oldObject` left to the caller when `typed`. */
function registerVariables(env: Environment, typed: boolean, scope: number): void {
  if (!typed) env.registerVariable('object', 'dyn').registerVariable('oldObject', 'dyn');
  if (scope & SCOPE.request) env.registerVariable('request', 'kubernetes.AdmissionRequest');
  if (scope & SCOPE.namespace) env.registerVariable('namespaceObject', 'kubernetes.Namespace');
  if (scope & SCOPE.authorizer) env.registerVariable('authorizer', AUTHORIZER);
}

/**
 * Conversions cel-go has that the engine lacks: int of a uint (in range); bytes ordered as Go's
 * bytes.Compare (unsigned, byte by byte, a prefix first). Those of timestamps and durations: time.ts.
 */
function registerConversions(env: Environment): void {
  env
    .registerFunction('int(uint): int', (u: { valueOf(): bigint | number }) => {
      const v = BigInt(u.valueOf());
      if (v > INT64_MAX) throw new RangeError('integer overflow');
      return v;
    })
    // Bytes order as Go's bytes.Compare: unsigned, byte by byte, a prefix first.
    .registerOperator('bytes < bytes', (a: Uint8Array, b: Uint8Array) => compareBytes(a, b) < 0)
    .registerOperator('bytes <= bytes', (a: Uint8Array, b: Uint8Array) => compareBytes(a, b) <= 0)
    .registerOperator('bytes > bytes', (a: Uint8Array, b: Uint8Array) => compareBytes(a, b) > 0)
    .registerOperator('bytes >= bytes', (a: Uint8Array, b: Uint8Array) => compareBytes(a, b) >= 0);
}

/**
 * Comparisons with null of the types cel-go's checker assigns null to (once they are all
 * registered): those of the parts in `scope`.
 */
function registerNullEquality(env: Environment, scope: number): void {
  const types = [...ALWAYS_NULLABLE, 'optional<dyn>'];
  for (const [part, nullable] of PART_NULLABLE) if (scope & part) types.push(...nullable);
  for (const type of types) env.registerOperator(`${type} == null`, (a: unknown, b: unknown) => a === b);
}

/**
 * The object and opaque types of the environment, to which cel-go's checker assigns null (its
 * legacy nullable kinds: structs, opaque types, timestamps, durations): `request.kind == null` and
 * `[quantity('1'), null]` check. Those of every scope first, then those of each part.
 */
const ALWAYS_NULLABLE = [TIMESTAMP, 'google.protobuf.Duration'];
const PART_NULLABLE: ReadonlyArray<readonly [number, readonly string[]]> = [
  [
    SCOPE.request,
    [
      'kubernetes.AdmissionRequest',
      'kubernetes.GroupVersionKind',
      'kubernetes.GroupVersionResource',
      'kubernetes.UserInfo',
    ],
  ],
  [
    SCOPE.namespace,
    [
      // cel-go compares any message-typed value with null; webhooks always see null here.
      'kubernetes.Namespace',
      'kubernetes.NamespaceMetadata',
      'kubernetes.NamespaceSpec',
      'kubernetes.NamespaceStatus',
      'kubernetes.NamespaceCondition',
    ],
  ],
  [
    SCOPE.authorizer,
    [
      AUTHORIZER,
      'kubernetes.authorization.PathCheck',
      'kubernetes.authorization.GroupCheck',
      'kubernetes.authorization.ResourceCheck',
      'kubernetes.authorization.Decision',
    ],
  ],
  // The opaque types of the Kubernetes libraries.
  [
    SCOPE.libraries,
    ['kubernetes.Quantity', 'kubernetes.URL', 'net.IP', 'net.CIDR', 'kubernetes.NamedFormat', 'kubernetes.Semver'],
  ],
];

function compareBytes(a: Uint8Array, b: Uint8Array): number {
  const n = Math.min(a.length, b.length);
  for (let i = 0; i < n; i++) if (a[i] !== b[i]) return a[i]! - b[i]!;
  return a.length - b.length;
}

/**
 * cel-go limits an expression's size (100,000 code points) and nesting, not the length of a
 * list, a map or an argument list: parse-limits.ts refuses what cel-go's parser refuses before
 * the engine parses, so the engine's own limits are lifted past anything that gets through.
 */
const ENGINE_LIMITS = {
  maxAstNodes: Number.MAX_SAFE_INTEGER,
  maxDepth: Number.MAX_SAFE_INTEGER,
  maxListElements: Number.MAX_SAFE_INTEGER,
  maxMapEntries: Number.MAX_SAFE_INTEGER,
  maxCallArguments: Number.MAX_SAFE_INTEGER,
};

/**
 * Builds an environment of `scope` (SCOPE); costly, so done once per scope, on first use. Without
 * `SCOPE.libraries`, the Kubernetes libraries (lists, strings, regex, URLs, quantity, sets, IP and
 * CIDR, format, semver) are left out: an expression that names none of their functions
 * (libraries/names.ts) answers the same in it; so for the other parts. `typed` leaves `object` and
 * `oldObject` undeclared, for a clone that declares them with a kind's schema.
 */
function buildEnvironment(scope: number, typed = false): Environment {
  const env = new MeteredEnvironment({ enableOptionalTypes: true, limits: ENGINE_LIMITS });
  if (scope & SCOPE.request) registerRequestTypes(env);
  if (scope & SCOPE.authorizer) registerAuthorizer(env);
  if (scope & SCOPE.namespace) registerNamespaceTypes(env);
  registerVariables(env, typed, scope);
  registerConversions(env);
  registerTime(env);
  if (scope & (SCOPE.strings | SCOPE.libraries)) registerStringConversions(env);
  if (scope & SCOPE.libraries) registerLibraries(env);
  registerNullEquality(env, scope);
  registerMeterProbe(env);
  registerParserProbe(env);
  learnEngineClasses(env);
  registerTwoVariableComprehensions(env);
  registerOptionals(env);
  installMeter(env);
  installOptionalEntries(env);
  return env;
}

/** True once the engine's classes are known: the same for every environment. */
let classesLearned = false;

/**
 * Tells the semantics the engine's classes of uints, durations and types (exported, or their names
 * lost to minifying) and its type values of maps and null, read from the environment once.
 */
function learnEngineClasses(env: Environment): void {
  if (classesLearned) return;
  const [map, none] = env.evaluate('[map, null_type]') as [object, object];
  useUintClass(UnsignedInt);
  useEngineClasses({ duration: Duration, type: map.constructor });
  useRuntimeTypes({ map, null: none });
  classesLearned = true;
}

/** The environments built so far, by scope. */
const environments = new Map<number, Environment>();

/** The environment of `scope` (SCOPE), built on first use. */
export function scopedEnvironment(scope: number): Environment {
  let env = environments.get(scope);
  if (!env) environments.set(scope, (env = buildEnvironment(scope)));
  return env;
}

/**
 * An environment of at least the parts of `scope`: one built already for them or for more (it
 * answers the same, scope.test.ts, and building another would cost a cold start more), else the
 * environment of `scope`.
 */
export function environmentCovering(scope: number): Environment {
  const exact = environments.get(scope);
  if (exact) return exact;
  for (const [built, env] of environments) if ((built & scope) === scope) return env;
  return scopedEnvironment(scope);
}

/** Forgets the environments built so far (tests: the next ones are built again). */
export function forgetEnvironments(): void {
  environments.clear();
}

/**
 * The shared matchConditions environment, built on first use: with the Kubernetes libraries, or
 * (`libraries` false) without them, for expressions that name none of their functions
 * (needsLibraries).
 */
export function matchConditionsEnvironment(libraries = true): Environment {
  return scopedEnvironment(libraries ? FULL_SCOPE : FULL_SCOPE & ~SCOPE.libraries);
}

/**
 * The parts of the environment an expression may reach (SCOPE): those it names. A name in a string
 * literal or a comment counts too, which only builds a larger environment for nothing; a type name
 * of the `kubernetes` namespace reaches every part.
 */
export function scopeOf(expression: string): number {
  return partsOf(expression) | (needsLibraries(expression) ? SCOPE.libraries : 0);
}

/** scopeOf without the libraries (whose chunk loads apart): what the expression names of the other parts. */
export function partsOf(expression: string): number {
  if (/\bkubernetes\b/.test(expression)) return FULL_SCOPE & ~SCOPE.libraries;
  let scope = 0;
  if (/\brequest\b/.test(expression)) scope |= SCOPE.request;
  if (/\bauthorizer\b/.test(expression)) scope |= SCOPE.authorizer;
  if (/\bnamespaceObject\b/.test(expression)) scope |= SCOPE.namespace;
  if (/\bstring\s*\(/.test(expression)) scope |= SCOPE.strings;
  return scope;
}

let typedEnvironment: Environment | undefined;

/**
 * The matchConditions environment without `object` and `oldObject`, for a clone that declares them
 * with the schema of a kind (the API server's type checking of policies); built on first use.
 */
export function typedObjectsEnvironment(): Environment {
  typedEnvironment ??= buildEnvironment(FULL_SCOPE, true);
  return typedEnvironment;
}
