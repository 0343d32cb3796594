/**
 * The params of a policy-binding pair, found as the API server's CollectParams finds them: none
 * needed (no paramKind, or no paramRef: one evaluation with null params), one by name, every one
 * a selector selects, in the binding's namespace or the request's; none found is nothing to
 * evaluate, or an error under parameterNotFoundAction Deny.
 */
import { type LabelSelector, selectorMatches } from '../../registration.ts';
import type { KubeObject } from '../../review/schemas.ts';
import { selectorError } from './matching.ts';
import type { ParamKind, ParamRef } from './types.ts';

/** Where the params of a kind are read from (the API server's informer of the paramKind). */
export interface ParamSource {
  /** True when the kind is namespaced (ConfigMap), false when cluster-scoped. */
  namespaced: boolean;
  /** The objects of the kind in a namespace (`''` for cluster-scoped kinds). */
  list(namespace: string): KubeObject[];
}

/** Finds the source of a paramKind; undefined when the cluster has no such kind. */
export type ParamSources = (kind: ParamKind) => ParamSource | undefined;

/** The params to evaluate with (null: evaluate once without params), or the configuration error. */
export type ParamsResult =
  | { params: Array<KubeObject | null>; error?: undefined }
  | { error: string; params?: undefined };

/** The kind as Go prints a ParamKind (`&ParamKind{APIVersion:v1,Kind:ConfigMap,}`). */
function kindText(kind: ParamKind): string {
  return `&ParamKind{APIVersion:${kind.apiVersion},Kind:${kind.kind},}`;
}

/** The params of one binding for a request in `namespace` (`''` for cluster-scoped requests). */
export function collectParams(
  paramKind: ParamKind | undefined,
  paramRef: ParamRef | undefined,
  namespace: string,
  sources: ParamSources | undefined,
): ParamsResult {
  if (!paramKind || !paramRef) return { params: [null] };
  const source = sources?.(paramKind);
  if (!source) return { error: `paramKind kind \`${kindText(paramKind)}\` not known` };
  let where = '';
  if (source.namespaced) {
    where = paramRef.namespace || namespace;
    if (!where)
      return { error: 'cannot use namespaced paramRef in policy binding that matches cluster-scoped resources' };
  } else if (paramRef.namespace) {
    return { error: 'paramRef.namespace must not be provided for a cluster-scoped `paramKind`' };
  }
  let params: KubeObject[];
  if (paramRef.name) {
    if (paramRef.selector) return { error: 'paramRef.name and paramRef.selector are mutually exclusive' };
    params = source.list(where).filter((o) => o.metadata?.name === paramRef.name);
  } else if (paramRef.selector) {
    const invalid = selectorError(paramRef.selector as LabelSelector);
    if (invalid) return { error: invalid };
    params = source.list(where).filter((o) => selectorMatches(paramRef.selector, o.metadata?.labels ?? {}));
  } else {
    return { error: 'one of name or selector must be provided' };
  }
  if (!params.length && paramRef.parameterNotFoundAction === 'Deny')
    return { error: 'no params found for policy binding with `Deny` parameterNotFoundAction' };
  return { params };
}

/** A ParamSources over a list of objects (the test kit's, the emulator's): kinds by apiVersion and kind. */
export function paramSourcesOf(
  objects: readonly KubeObject[],
  namespacedKinds: (kind: ParamKind) => boolean = () => true,
): ParamSources {
  return (kind) => {
    const ofKind = objects.filter((o) => o.apiVersion === kind.apiVersion && o.kind === kind.kind);
    const namespaced = namespacedKinds(kind);
    return {
      namespaced,
      list: (ns) => ofKind.filter((o) => (namespaced ? (o.metadata?.namespace ?? '') === ns : true)),
    };
  };
}

/**
 * The scope of param kinds as their objects show it: a kind is cluster-scoped when it has objects
 * and none of them has a namespace; a kind without objects is taken as namespaced (as ConfigMap).
 */
export function namespacedKindsOf(objects: readonly KubeObject[]): (kind: ParamKind) => boolean {
  return (kind) => {
    const ofKind = objects.filter((o) => o.apiVersion === kind.apiVersion && o.kind === kind.kind);
    return !ofKind.length || ofKind.some((o) => !!o.metadata?.namespace);
  };
}
