/**
 * The CEL environment of webhook matchConditions, as the API server declares it: the variables
 * `object`, `oldObject`, `request`, `namespaceObject` and `authorizer`, the types they have, the
 * conversions cel-go has beyond the engine's, and the Kubernetes libraries, every evaluation metered.
 */
import type { Environment } from '../engine.ts';
import { AUTHORIZER, registerAuthorizer } from '../libraries/authorizer.ts';
import { registerTwoVariableComprehensions } from './comprehensions.ts';
import {
  registerLists,
  registerQuantity,
  registerRegex,
  registerStrings,
  registerUrls,
  TIMESTAMP,
} from '../libraries/bind.ts';
import {
  registerFormat,
  registerIpAndCidr,
  registerListsV3,
  registerSemver,
  registerSets,
} from '../libraries/bind-later.ts';
import { installOptionalEntries, registerParserProbe } from './entries.ts';
import { registerOptionals } from './optionals.ts';
import { installMeter, registerMeterProbe } from '../cost/evaluation.ts';
import { MeteredEnvironment } from '../cost/meter.ts';
import { useEngineClasses, useUintClass } from './equality.ts';
import { useRuntimeTypes } from './conversions.ts';
import { registerTime } from '../libraries/time.ts';

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

/** The variables every condition may read; `object` and `oldObject` left to the caller when `typed`. */
function registerVariables(env: Environment, typed: boolean): void {
  if (!typed) env.registerVariable('object', 'dyn').registerVariable('oldObject', 'dyn');
  env
    .registerVariable('request', 'kubernetes.AdmissionRequest')
    .registerVariable('namespaceObject', 'kubernetes.Namespace')
    .registerVariable('authorizer', AUTHORIZER);
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
    .registerOperator('bytes >= bytes', (a: Uint8Array, b: Uint8Array) => compareBytes(a, b) >= 0)
    // cel-go compares any message-typed value with null; webhooks always see null here.
    .registerOperator('kubernetes.Namespace == null', (a: unknown, b: unknown) => a === b);
}

/**
 * Comparisons with null of the types cel-go's checker assigns null to (once they are all
 * registered); the libraries' types only in an environment with the libraries.
 */
function registerNullEquality(env: Environment, libraries: boolean): void {
  for (const type of [...NULLABLE, ...(libraries ? LIBRARY_NULLABLE : []), 'optional<dyn>'])
    env.registerOperator(`${type} == null`, (a: unknown, b: unknown) => a === b);
}

/**
 * The object and opaque types of the environment, to which cel-go's checker assigns null (its
 * legacy nullable kinds: structs, opaque types, timestamps, durations): `request.kind == null` and
 * `[quantity('1'), null]` check. (`namespaceObject == null` is registered with conversions.)
 */
const NULLABLE = [
  'kubernetes.AdmissionRequest',
  'kubernetes.GroupVersionKind',
  'kubernetes.GroupVersionResource',
  'kubernetes.UserInfo',
  'kubernetes.NamespaceMetadata',
  'kubernetes.NamespaceSpec',
  'kubernetes.NamespaceStatus',
  'kubernetes.NamespaceCondition',
  AUTHORIZER,
  'kubernetes.authorization.PathCheck',
  'kubernetes.authorization.GroupCheck',
  'kubernetes.authorization.ResourceCheck',
  'kubernetes.authorization.Decision',
  TIMESTAMP,
  'google.protobuf.Duration',
];

/** The opaque types of the Kubernetes libraries, nullable as the others. */
const LIBRARY_NULLABLE = [
  'kubernetes.Quantity',
  'kubernetes.URL',
  'net.IP',
  'net.CIDR',
  'kubernetes.NamedFormat',
  'kubernetes.Semver',
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
 * Builds an environment; costly, so done once, on first use. Without `libraries`, the Kubernetes
 * libraries (lists, strings, regex, URLs, quantity, sets, IP and CIDR, format, semver) are left
 * out: an expression that names none of their functions (libraryNames.ts) answers the same in it.
 * `typed` leaves `object` and `oldObject` undeclared, for a clone that declares them with a kind's schema.
 */
function buildEnvironment(libraries: boolean, typed = false): Environment {
  const env = new MeteredEnvironment({ enableOptionalTypes: true, limits: ENGINE_LIMITS });
  registerRequestTypes(env);
  registerAuthorizer(env);
  registerNamespaceTypes(env);
  registerVariables(env, typed);
  registerConversions(env);
  registerTime(env);
  if (libraries) {
    for (const register of [registerLists, registerStrings, registerRegex, registerUrls, registerQuantity])
      register(env);
    for (const register of [registerSets, registerIpAndCidr, registerFormat, registerSemver, registerListsV3])
      register(env);
  }
  registerNullEquality(env, libraries);
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
 * Tells the semantics the engine's classes of uints, durations and types and its type values of maps
 * and null (their names do not survive minifying), from one evaluation, once.
 */
function learnEngineClasses(env: Environment): void {
  if (classesLearned) return;
  const probe = "[dyn(0u), dyn(duration('1s')), dyn(map), dyn(type(null))]";
  const [uint, duration, map, none] = env.evaluate(probe) as [object, object, object, object];
  useUintClass(uint.constructor);
  useEngineClasses({ duration: duration.constructor, type: map.constructor });
  useRuntimeTypes({ map, null: none });
  classesLearned = true;
}

const environments: { base?: Environment; full?: Environment } = {};

/**
 * The shared matchConditions environment, built on first use: with the Kubernetes libraries, or
 * (`libraries` false) without them, for expressions that name none of their functions
 * (needsLibraries), which a function's typical conditions do: it is built in a fraction of the time.
 */
export function matchConditionsEnvironment(libraries = true): Environment {
  if (libraries) return (environments.full ??= buildEnvironment(true));
  return (environments.base ??= buildEnvironment(false));
}

let typedEnvironment: Environment | undefined;

/**
 * The matchConditions environment without `object` and `oldObject`, for a clone that declares them
 * with the schema of a kind (the API server's type checking of policies); built on first use.
 */
export function typedObjectsEnvironment(): Environment {
  typedEnvironment ??= buildEnvironment(true, true);
  return typedEnvironment;
}
