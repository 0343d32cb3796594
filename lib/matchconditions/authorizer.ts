/**
 * The authorizer library (k8s.io/apiserver/pkg/cel/library/authz.go): `authorizer`, its checks and
 * decisions, deciding with the Authorize function the evaluation is given.
 */
import type { Environment } from '@marcbachmann/cel-js';
import { serviceAccountUser } from './k8s/format.ts';

/** What an authorizer check asks (`authorizer.group(...).resource(...)...check(verb)`). */
export interface AuthorizationAttributes {
  /** The user asked about: the request's user, or a service account's. */
  user: { username: string; uid?: string; groups?: string[]; extra?: Record<string, string[]> };
  verb: string;
  /** Set for `authorizer.path(...)` checks. */
  path?: string;
  group?: string;
  resource?: string;
  subresource?: string;
  namespace?: string;
  name?: string;
  /**
   * `fieldSelector(s)` and `labelSelector(s)` (from 1.32) as written; the API server hands the
   * authorizer their parsed requirements, or none when one does not parse.
   */
  fieldSelector?: string;
  /** `labelSelector(s)` (from 1.32) as written, as fieldSelector above. */
  labelSelector?: string;
}

/** An authorizer's answer; `NoOpinion` reads as not allowed. */
export interface AuthorizationDecision {
  decision: 'Allow' | 'Deny' | 'NoOpinion';
  reason?: string;
}

/** Decides authorizer checks for conditions that use `authorizer` (tests, the emulator). */
export type Authorize = (attributes: AuthorizationAttributes) => AuthorizationDecision;

/** The default authorizer: no opinion on anything, so `allowed()` is false. */
export const noOpinion: Authorize = () => ({ decision: 'NoOpinion', reason: 'no authorizer configured' });

// The authorizer library's types (k8s.io/apiserver/pkg/cel/library/authz.go).
/** `authorizer`: checks as a user, with the request's own resource (`requestResource`). */
export class AuthorizerValue {
  constructor(
    readonly authorize: Authorize,
    readonly user: AuthorizationAttributes['user'],
    readonly requestResource?: ResourceCheckValue,
  ) {}
}
class PathCheckValue {
  constructor(
    readonly authorizer: AuthorizerValue,
    readonly path: string,
  ) {}
}
class GroupCheckValue {
  constructor(
    readonly authorizer: AuthorizerValue,
    readonly group: string,
  ) {}
}
/** What a resource check's builder methods set. */
type ResourceField = 'subresource' | 'namespace' | 'name' | 'fieldSelector' | 'labelSelector';
/** A resource check being built (`authorizer.group(g).resource(r)…`). */
export class ResourceCheckValue {
  constructor(
    readonly authorizer: AuthorizerValue,
    readonly fields: Pick<AuthorizationAttributes, 'group' | 'resource' | ResourceField>,
  ) {}
  with(field: ResourceField, value: string): ResourceCheckValue {
    return new ResourceCheckValue(this.authorizer, { ...this.fields, [field]: value });
  }
}
class DecisionValue {
  constructor(
    readonly decision: AuthorizationDecision['decision'] | 'Error',
    readonly reason: string,
    readonly error: string,
  ) {}
}

/** `authorizer.serviceAccount(namespace, name)`: the names checked, the account's two groups. */
function serviceAccountAuthorizer(a: AuthorizerValue, namespace: string, name: string): AuthorizerValue {
  const user = serviceAccountUser(namespace, name);
  return new AuthorizerValue(a.authorize, { username: user.username, groups: [...user.groups] });
}

function decide(authorizer: AuthorizerValue, attributes: Omit<AuthorizationAttributes, 'user'>): DecisionValue {
  try {
    const answer = authorizer.authorize({ user: authorizer.user, ...attributes });
    return new DecisionValue(answer.decision, answer.reason ?? '', '');
  } catch (err) {
    return new DecisionValue('Error', '', err instanceof Error ? err.message : String(err));
  }
}

/** The fields of a check with an empty selector left out, as the API server leaves one out. */
function withoutEmptySelectors(fields: ResourceCheckValue['fields']): ResourceCheckValue['fields'] {
  const out = { ...fields };
  if (!out.fieldSelector) delete out.fieldSelector;
  if (!out.labelSelector) delete out.labelSelector;
  return out;
}

/** The authorizer's type name, the type of the `authorizer` variable. */
export const AUTHORIZER = 'kubernetes.authorization.Authorizer';
const PATH_CHECK = 'kubernetes.authorization.PathCheck';
const GROUP_CHECK = 'kubernetes.authorization.GroupCheck';
const RESOURCE_CHECK = 'kubernetes.authorization.ResourceCheck';
const DECISION = 'kubernetes.authorization.Decision';

/** Registers the authorizer's types and functions. */
export function registerAuthorizer(env: Environment): void {
  env
    .registerType(PATH_CHECK, PathCheckValue)
    .registerType(GROUP_CHECK, GroupCheckValue)
    .registerType(RESOURCE_CHECK, ResourceCheckValue)
    .registerType(DECISION, DecisionValue)
    .registerType(AUTHORIZER, { ctor: AuthorizerValue, fields: { requestResource: RESOURCE_CHECK } });
  env
    .registerFunction(
      `${AUTHORIZER}.path(string): ${PATH_CHECK}`,
      (a: AuthorizerValue, path: string) => new PathCheckValue(a, path),
    )
    .registerFunction(
      `${AUTHORIZER}.group(string): ${GROUP_CHECK}`,
      (a: AuthorizerValue, group: string) => new GroupCheckValue(a, group),
    )
    .registerFunction(`${AUTHORIZER}.serviceAccount(string, string): ${AUTHORIZER}`, serviceAccountAuthorizer)
    .registerFunction(
      `${GROUP_CHECK}.resource(string): ${RESOURCE_CHECK}`,
      (g: GroupCheckValue, resource: string) => new ResourceCheckValue(g.authorizer, { group: g.group, resource }),
    )
    .registerFunction(`${RESOURCE_CHECK}.subresource(string): ${RESOURCE_CHECK}`, (r: ResourceCheckValue, v: string) =>
      r.with('subresource', v),
    )
    .registerFunction(`${RESOURCE_CHECK}.namespace(string): ${RESOURCE_CHECK}`, (r: ResourceCheckValue, v: string) =>
      r.with('namespace', v),
    )
    .registerFunction(`${RESOURCE_CHECK}.name(string): ${RESOURCE_CHECK}`, (r: ResourceCheckValue, v: string) =>
      r.with('name', v),
    )
    .registerFunction(
      `${RESOURCE_CHECK}.fieldSelector(string): ${RESOURCE_CHECK}`,
      (r: ResourceCheckValue, v: string) => r.with('fieldSelector', v),
    )
    .registerFunction(
      `${RESOURCE_CHECK}.labelSelector(string): ${RESOURCE_CHECK}`,
      (r: ResourceCheckValue, v: string) => r.with('labelSelector', v),
    )
    .registerFunction(`${RESOURCE_CHECK}.check(string): ${DECISION}`, (r: ResourceCheckValue, verb: string) =>
      decide(r.authorizer, { verb, ...withoutEmptySelectors(r.fields) }),
    )
    .registerFunction(`${PATH_CHECK}.check(string): ${DECISION}`, (p: PathCheckValue, verb: string) =>
      decide(p.authorizer, { verb, path: p.path }),
    )
    .registerFunction(`${DECISION}.allowed(): bool`, (d: DecisionValue) => d.decision === 'Allow')
    .registerFunction(`${DECISION}.reason(): string`, (d: DecisionValue) => d.reason)
    .registerFunction(`${DECISION}.errored(): bool`, (d: DecisionValue) => d.decision === 'Error')
    .registerFunction(`${DECISION}.error(): string`, (d: DecisionValue) => d.error);
}
