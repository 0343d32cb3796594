/**
 * The resource `klw new` scaffolds an admission function for: `--resource`, else the one the
 * function's name says, else configmaps; and the template values for it.
 */
import { builtinResources, LAST_TABLE_MINOR, KINDS, type ResourceDescriptor } from '../lib/internal.ts';
import { KlwError } from './errors.ts';

/** The kinds of function `klw new` and `klw init` write. */
export type FunctionType = 'validating' | 'mutating' | 'conversion';

/** The resource an admission function is scaffolded for when neither `--resource` nor its name says one. */
export const DEFAULT_RESOURCE = 'configmaps';

/** A built-in resource `on(...)` has a descriptor for: its exported name and the descriptor. */
export interface Scaffolded {
  name: string;
  descriptor: ResourceDescriptor<unknown>;
}

const DESCRIPTORS: Scaffolded[] = Object.entries(KINDS).map(([name, descriptor]) => ({
  name,
  descriptor: descriptor as ResourceDescriptor<unknown>,
}));

/** Names a user may write for a resource: its plural, its kind, a singular (any case). */
function namesOf(d: ResourceDescriptor<unknown>): string[] {
  const kind = d.kind.toLowerCase();
  return [
    d.resource,
    kind,
    d.resource
      .replace(/ies$/, 'y')
      .replace(/(s|x|ch|sh)es$/, '$1')
      .replace(/s$/, ''),
  ].filter((v, i, all) => all.indexOf(v) === i);
}

/**
 * The descriptor for `--resource`: a plural name (`pods`), optionally with its group as kubectl
 * writes it (`deployments.apps`, `ingresses.networking.k8s.io`). A kind or singular is refused
 * with the plural to write, as lint refuses it in a rule.
 */
export function resolveResource(spec: string): Scaffolded {
  const [plural = '', ...groupParts] = spec.trim().split('.');
  const group = groupParts.length ? groupParts.join('.') : undefined;
  const inGroup = DESCRIPTORS.filter(
    (d) => group === undefined || d.descriptor.group === group || (group === 'core' && d.descriptor.group === ''),
  );
  const exact = inGroup.filter((d) => d.descriptor.resource === plural);
  if (exact.length === 1) return exact[0]!;
  if (exact.length > 1)
    throw new KlwError(
      `--resource ${spec}: ` +
        `${exact.map((d) => `${d.descriptor.resource}.${d.descriptor.group || 'core'}`).join(' or ')}? add the group`,
    );
  const alike = inGroup.find((d) => namesOf(d.descriptor).includes(plural.toLowerCase()));
  if (alike)
    throw new KlwError(
      `--resource ${spec}: resources are named by their plural, lower-case; ` +
        `did you mean --resource ${alike.descriptor.resource}${group ? `.${group}` : ''}?`,
    );
  const builtin = builtinResources().find(
    (r) =>
      r.resource === plural &&
      !r.subresource &&
      (group === undefined || r.group === group) &&
      r.minors.has(LAST_TABLE_MINOR),
  );
  if (builtin)
    throw new KlwError(
      `--resource ${spec}: ${builtin.group || 'core'}/${builtin.version} ${plural} has no typed descriptor ` +
        '(it is not served at a GA or beta version); scaffold another and write its rule by hand',
    );
  throw new KlwError(
    `--resource ${spec}: Kubernetes 1.${LAST_TABLE_MINOR} has no resource ${JSON.stringify(plural)}` +
      (group ? ` in group ${JSON.stringify(group)}` : '') +
      "; for a CRD's resources, scaffold one and write the rule by hand " +
      "({ apiGroups: ['example.com'], apiVersions: ['v1'], resources: ['widgets'] })",
  );
}

/** The resource a function's name says (`pod-policy` → pods, `deployment-replicas` → deployments), if any. */
export function resourceFromName(name: string): Scaffolded | undefined {
  for (const word of name.split('-')) {
    const found = DESCRIPTORS.find((d) => d.descriptor.resource === word || d.descriptor.kind.toLowerCase() === word);
    if (found) return found;
  }
  return undefined;
}

/** The template placeholders of an admission function on a resource. */
export function resourceValues(type: FunctionType, { name, descriptor: d }: Scaffolded): Record<string, string> {
  const ops = builtinResources().find(
    (r) => r.group === d.group && r.version === d.version && r.resource === d.resource && !r.subresource,
  )?.operations ?? ['CREATE', 'UPDATE'];
  const wanted = (type === 'mutating' ? ['CREATE'] : ['CREATE', 'UPDATE']).filter((o) => ops.includes(o as never));
  if (!wanted.length)
    throw new KlwError(
      `${d.resource} takes no ${type === 'mutating' ? 'CREATE' : 'CREATE or UPDATE'} ` +
        `(it takes ${ops.join(', ') || 'none'}); a ${type} function on it is never called`,
    );
  return {
    __KIND__: name,
    __RESOURCE__: d.resource,
    __API_VERSION__: d.group ? `${d.group}/${d.version}` : d.version,
    __OPERATIONS__: wanted.map((o) => `.${o.toLowerCase()}()`).join(''),
    __NAMESPACE__: d.namespaced ? "namespace: 'default', " : '',
    __ARTICLE__: /^[AEIOU]/.test(name) ? 'an' : 'a',
  };
}
