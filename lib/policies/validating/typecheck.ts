/**
 * Type checking of a ValidatingAdmissionPolicy against the kinds it matches, as the API server
 * does it after a policy is written (admission/plugin/policy/validating typechecking.go): the
 * kinds its matchConstraints' resourceRules name exactly (no `*`, no subresource; at most ten),
 * each validation's expression and messageExpression checked with `object` and `oldObject` of each
 * kind's schema and `params` of the paramKind's, variables with their types; what does not check
 * is a warning of the policy's status (`status.typeChecking.expressionWarnings`): its field path
 * and, per kind, `<group>/<version>, Kind=<kind>: <cel-go's issues>`. A warning, never a refusal:
 * the policy still evaluates. For the test kit and lint; functions never load it.
 */
import { builtinResources, LAST_TABLE_MINOR, tableMinor } from '../../k8s/resources.ts';
import { compilePolicyExpression, type PolicyCompileOptions } from '../cel.ts';
import { compileVariables } from '../generic/composition.ts';
import { CelTypes, type OpenApiSchema } from '../generic/schema-types.ts';
import { builtinSchema, builtinTypeName } from '../mutating/smd/schema.ts';
import type { ValidatingPolicySpec } from './types.ts';

/** A group, version and kind. */
export interface GroupVersionKind {
  group: string;
  version: string;
  kind: string;
}

/** A warning of type checking, as the policy's status carries it (ExpressionWarning). */
export interface ExpressionWarning {
  /** `spec.validations[0].expression`. */
  fieldRef: string;
  warning: string;
}

/** What type checking reads of the cluster: its RESTMapper and its schemas. */
export interface TypeCheckSource {
  /** The kinds of a resource (RESTMapper.KindsFor); none when the cluster has no such resource. */
  kindsFor(resource: { group: string; version: string; resource: string }): GroupVersionKind[];
  /** The CEL type of a kind's schema, built into `types`; undefined when unresolved (then not checked). */
  typeOf(kind: GroupVersionKind, types: CelTypes): string | undefined;
}

/** At most this many kinds are checked for a policy (maxTypesToCheck). */
const MAX_TYPES_TO_CHECK = 10;

/** A kind as Go prints a GroupVersionKind: `apps/v1, Kind=Deployment`, `/v1, Kind=Pod`. */
export function gvkString(k: GroupVersionKind): string {
  return `${k.group}/${k.version}, Kind=${k.kind}`;
}

/** The kinds to check: those the rules name exactly, sorted by group, version, kind (typesToCheck). */
export function typesToCheck(
  spec: ValidatingPolicySpec,
  source: Pick<TypeCheckSource, 'kindsFor'>,
): GroupVersionKind[] {
  const found = new Map<string, GroupVersionKind>();
  let count = 0;
  const sorted = () =>
    [...found.values()].sort((a, b) => cmp(a.group, b.group) || cmp(a.version, b.version) || cmp(a.kind, b.kind));
  for (const rule of spec.matchConstraints?.resourceRules ?? []) {
    if (rule.apiGroups.some((g) => g.includes('*')) || rule.apiVersions.some((v) => v.includes('*'))) continue;
    const resources = rule.resources.filter((r) => !/[*/]/.test(r));
    for (const group of [...rule.apiGroups].sort(cmp))
      for (const version of [...rule.apiVersions].sort(cmp))
        for (const resource of [...resources].sort(cmp))
          for (const kind of source.kindsFor({ group, version, resource })) {
            if (!kind.kind && !kind.group && !kind.version) continue;
            found.set(gvkString(kind), kind);
            if (++count === MAX_TYPES_TO_CHECK) return sorted();
          }
  }
  return sorted();
}

/** Go's strings.Compare as a sort order (byte order, not locale). */
const cmp = (a: string, b: string) => (a < b ? -1 : a > b ? 1 : 0);

/** A paramKind's group, version and kind; undefined when its apiVersion does not parse. */
function paramKindOf(spec: ValidatingPolicySpec): GroupVersionKind | undefined {
  const p = spec.paramKind;
  if (!p) return undefined;
  const parts = p.apiVersion.split('/');
  if (parts.length > 2 || parts.some((x) => !x)) return undefined;
  const [group, version] = parts.length === 2 ? parts : ['', parts[0]!];
  return { group: group!, version: version!, kind: p.kind };
}

/** One kind's checking environment: `object` of its type, `params` of the paramKind's, variables typed. */
function contextFor(
  spec: ValidatingPolicySpec,
  types: CelTypes,
  object: string,
  paramKind: GroupVersionKind | undefined,
  source: TypeCheckSource,
  kubernetesVersion: string | undefined,
): Omit<PolicyCompileOptions, 'returns'> {
  const params = paramKind ? (source.typeOf(paramKind, types) ?? 'dyn') : undefined;
  const schemaTypes = { types: types.types, object, ...(params ? { params } : {}) };
  const env = { hasParams: paramKind !== undefined, kubernetesVersion, schemaTypes };
  // A variable that does not check is dyn to the others, and not reported (only validations are).
  const variables = compileVariables(spec.variables ?? [], env);
  return { ...env, hasAuthorizer: true, variables: variables.names, variableTypes: variables.types };
}

/**
 * The warnings of type checking a policy with the kinds and schemas of `source` (the API server's
 * TypeChecker.Check): each validation's expression, then its messageExpression (neither's type
 * enforced here). A kind whose schema is not found is not checked; one whose schema gives no type
 * is checked with `object` dyn.
 */
export function typeCheckPolicySpec(
  spec: ValidatingPolicySpec,
  source: TypeCheckSource,
  kubernetesVersion?: string,
): ExpressionWarning[] {
  const paramKind = paramKindOf(spec);
  const contexts = typesToCheck(spec, source).flatMap((gvk) => {
    const types = new CelTypes();
    const object = source.typeOf(gvk, types);
    if (object === undefined) return [];
    return [{ gvk, options: contextFor(spec, types, object, paramKind, source, kubernetesVersion) }];
  });
  if (!contexts.length) return [];
  const check = (expression: string): string => {
    const results: string[] = [];
    for (const { gvk, options } of contexts) {
      const compiled = compilePolicyExpression(expression, { ...options, returns: ['any'] });
      if (compiled.error !== undefined)
        results.push(`${gvkString(gvk)}: ${compiled.error.replace(/^compilation failed: /, '')}\n`);
    }
    return results.join('\n');
  };
  const warnings: ExpressionWarning[] = [];
  for (const [i, v] of (spec.validations ?? []).entries()) {
    const expression = check(v.expression);
    if (expression) warnings.push({ fieldRef: `spec.validations[${i}].expression`, warning: expression });
    if (!v.messageExpression) continue;
    const message = check(v.messageExpression);
    if (message) warnings.push({ fieldRef: `spec.validations[${i}].messageExpression`, warning: message });
  }
  return warnings;
}

/** A custom resource's kind and schema, for checking policies that match it. */
export interface CustomKind extends GroupVersionKind {
  /** Plural resource name, `widgets`. */
  resource: string;
  /** The version's OpenAPI schema (`spec.versions[].schema.openAPIV3Schema` of its CRD). */
  schema?: OpenApiSchema;
}

/**
 * The built-in kinds served by Kubernetes `minor` and their schemas, and custom kinds with theirs:
 * the cluster a policy is checked against.
 */
export function builtinTypeCheckSource(
  minor: number = LAST_TABLE_MINOR,
  custom: readonly CustomKind[] = [],
): TypeCheckSource {
  const at = tableMinor(minor);
  return {
    kindsFor: ({ group, version, resource }) => {
      const own = custom.filter((c) => c.group === group && c.version === version && c.resource === resource);
      if (own.length) return own.map(({ group: g, version: v, kind }) => ({ group: g, version: v, kind }));
      return builtinResources()
        .filter(
          (r) =>
            r.group === group && r.version === version && r.resource === resource && !r.subresource && r.minors.has(at),
        )
        .map((r) => ({ group, version, kind: r.kind }));
    },
    typeOf: (gvk, types) => {
      const own = custom.find((c) => c.group === gvk.group && c.version === gvk.version && c.kind === gvk.kind);
      if (own) return own.schema ? (types.openApi(own.schema, gvk.kind, true) ?? 'dyn') : undefined;
      const name = builtinTypeName(gvk.group, gvk.version, gvk.kind);
      return name ? (types.builtin(builtinSchema(), name, gvk.kind) ?? 'dyn') : undefined;
    },
  };
}

/** A policy as a project holds it: the defined function, its completed policy, or a bare spec. */
export type CheckedPolicy =
  | { validatingPolicy: { spec: ValidatingPolicySpec } }
  | { spec: ValidatingPolicySpec }
  | ValidatingPolicySpec;

/**
 * The type checking warnings the API server of `kubernetesVersion` ("1.31"; the newest modelled
 * by default) would set on a policy's status: its built-in kinds' schemas, and `customKinds` for
 * the custom resources it matches (a custom kind not given is not checked, as a kind whose schema
 * the API server cannot resolve). Each warning names its field (`spec.validations[0].expression`).
 */
export function typeCheckValidatingPolicy(
  policy: CheckedPolicy,
  kubernetesVersion?: string,
  options: { customKinds?: readonly CustomKind[] } = {},
): ExpressionWarning[] {
  const spec = 'validatingPolicy' in policy ? policy.validatingPolicy.spec : 'spec' in policy ? policy.spec : policy;
  const minor = kubernetesVersion ? Number(/^v?1\.(\d+)/.exec(kubernetesVersion)?.[1]) : undefined;
  if (kubernetesVersion && !Number.isInteger(minor))
    throw new TypeError(`kubernetesVersion ${JSON.stringify(kubernetesVersion)}: expected 1.<minor>, such as "1.31"`);
  const source = builtinTypeCheckSource(minor ?? LAST_TABLE_MINOR, options.customKinds);
  return typeCheckPolicySpec(spec, source, kubernetesVersion);
}
