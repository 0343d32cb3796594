import type { KubeObject, Operation } from './review/schemas.ts';

/** A rule of a webhook: which operations on which resources send it a review. */
export interface RuleWithOperations {
  operations: Array<Operation | '*'>;
  apiGroups: string[];
  apiVersions: string[];
  resources: string[];
  scope?: 'Cluster' | 'Namespaced' | '*';
}

/** Carries the object type of a typed rule or resource; a type only, never set at run time. */
declare const OBJECT_TYPE: unique symbol;

/** A rule that also says which object type its reviews carry (built by `on`). */
export type TypedRule<T> = RuleWithOperations & { readonly [OBJECT_TYPE]?: T };

/**
 * A resource a typed rule is about: a small descriptor (exported for every built-in kind, `Pod`,
 * `Deployment`), with the object type as a type only, so bundles carry no model classes.
 */
export interface ResourceDescriptor<T = KubeObject> {
  /** API group, `''` for the core group. */
  readonly group: string;
  readonly version: string;
  /** Plural resource name, `pods`. */
  readonly resource: string;
  readonly kind: string;
  readonly namespaced: boolean;
  readonly [OBJECT_TYPE]?: T;
}

/** An object type from a model package made usable as the object of a review. */
export type ReviewObject<T> = T & KubeObject;

/** A typed rule being built: each method returns a new rule; the rule itself goes in `rules`. */
export interface RuleBuilder<T> extends TypedRule<T> {
  /** Adds CREATE. */
  create(): RuleBuilder<T>;
  /** Adds UPDATE. */
  update(): RuleBuilder<T>;
  /** Adds DELETE. */
  delete(): RuleBuilder<T>;
  /** Adds CONNECT (only connect subresources, such as `pods/exec`, see it). */
  connect(): RuleBuilder<T>;
  /** Matches these subresources (`status`, `exec`) instead of the resource itself. */
  subresources(...names: string[]): RuleBuilder<T>;
  /** Matches these API versions instead of the descriptor's own. */
  versions(...versions: string[]): RuleBuilder<T>;
}

/** Marks rules made by `on`, so registration copies them as plain rules. */
const BUILT = Symbol('kube-lambda-webhooks.rule');

interface RuleState {
  resource: ResourceDescriptor<unknown>;
  operations: Operation[];
  subresources: string[];
  versions: string[];
}

function buildRule<T>(state: RuleState): RuleBuilder<T> {
  const { resource } = state;
  const rule: RuleWithOperations = {
    operations: state.operations.length ? [...state.operations] : ['*'],
    apiGroups: [resource.group],
    apiVersions: state.versions.length ? [...state.versions] : [resource.version],
    resources: state.subresources.length
      ? state.subresources.map((s) => `${resource.resource}/${s}`)
      : [resource.resource],
    scope: resource.namespaced ? 'Namespaced' : 'Cluster',
  };
  const next = (change: Partial<RuleState>) => () => buildRule<T>({ ...state, ...change });
  const add = (operation: Operation) =>
    next({ operations: state.operations.includes(operation) ? state.operations : [...state.operations, operation] });
  const methods = {
    create: add('CREATE'),
    update: add('UPDATE'),
    delete: add('DELETE'),
    connect: add('CONNECT'),
    subresources: (...names: string[]) => buildRule<T>({ ...state, subresources: names }),
    versions: (...versions: string[]) => buildRule<T>({ ...state, versions }),
  };
  // Methods are not enumerable: the rule reads (and serializes) as a plain rule.
  for (const [key, value] of [...Object.entries(methods), [BUILT, true] as const]) {
    Object.defineProperty(rule, key, { value, enumerable: false });
  }
  return rule as RuleBuilder<T>;
}

/**
 * Starts a typed rule on a resource: `on(Pod).create().update()` matches CREATE and UPDATE of
 * pods (v1, namespaced), and a webhook whose rules are typed gets reviews of that object type.
 * Without an operation the rule matches all (`*`).
 */
export function on<T>(resource: ResourceDescriptor<T>): RuleBuilder<T> {
  const fields = resource ? [resource.resource, resource.group, resource.version] : [];
  if (!resource || fields.some((f) => typeof f !== 'string')) {
    throw new TypeError(`on(...) takes a resource descriptor such as Pod, got ${JSON.stringify(resource)}`);
  }
  return buildRule<T>({ resource, operations: [], subresources: [], versions: [] });
}

/** A rule as plain data (what a built rule reads as), for manifests and comparisons. */
export function plainRule(rule: RuleWithOperations): RuleWithOperations {
  if (!(rule as unknown as Record<symbol, unknown>)?.[BUILT]) return rule;
  const { operations, apiGroups, apiVersions, resources, scope } = rule;
  return {
    operations: [...operations],
    apiGroups: [...apiGroups],
    apiVersions: [...apiVersions],
    resources: [...resources],
    ...(scope ? { scope } : {}),
  };
}
