/**
 * The authorizer library (k8s.io/apiserver/pkg/cel/library/authz.go): `authorizer`, its checks and
 * decisions, deciding with the Authorize function the evaluation is given.
 */
import type { Environment } from '../engine.ts';
import { serviceAccountUser } from './format.ts';
import {
  parseFieldSelector,
  parseLabelSelector,
  type FieldSelectorRequirement,
  type LabelSelectorRequirement,
} from './selectors.ts';
import { trim } from './strings.ts';

export type { FieldSelectorRequirement, LabelSelectorOperator, LabelSelectorRequirement } from './selectors.ts';

/** What an authorizer check asks (`authorizer.group(...).resource(...)...check(verb)`). */
export interface AuthorizationAttributes {
  /** The user asked about: the request's user, or a service account's. */
  user: { username: string; uid?: string; groups?: string[]; extra?: Record<string, string[]> };
  /** The verb of `check(verb)`: an API verb (`list`), or an HTTP one for a path. */
  verb: string;
  /** Set for `authorizer.path(...)` checks. */
  path?: string;
  /** The API group of a resource check (`''`, the core group). */
  group?: string;
  /** The resource of a resource check (`pods`). */
  resource?: string;
  /** Set when `subresource(...)` was called, or for `requestResource` (`''` when none). */
  subresource?: string;
  /** Set when `namespace(...)` was called, or for `requestResource` (`''`: cluster scope). */
  namespace?: string;
  /** Set when `name(...)` was called, or for `requestResource`. */
  name?: string;
  /**
   * The requirements of `fieldSelector(s)` (from 1.32) as the API server parses the selector
   * (fields.ParseSelector); absent when the selector is empty, parses to none, or does not parse.
   */
  fieldSelectorRequirements?: FieldSelectorRequirement[];
  /** Why `fieldSelector(s)` does not parse, in apimachinery's words; the check goes on without it. */
  fieldSelectorParsingError?: string;
  /** The requirements of `labelSelector(s)` (from 1.32), as labels.Parse gives them; as fieldSelectorRequirements. */
  labelSelectorRequirements?: LabelSelectorRequirement[];
  /** Why `labelSelector(s)` does not parse, in apimachinery's words; the check goes on without it. */
  labelSelectorParsingError?: string;
}

/**
 * An authorizer's answer; `NoOpinion` reads as not allowed. `error` makes `errored()` true beside
 * the decision, as an authorizer that returns a decision and an error does (throwing is the same
 * as `NoOpinion` with the thrown message).
 */
export interface AuthorizationDecision {
  /** The answer: `allowed()` is true for `Allow` only. */
  decision: 'Allow' | 'Deny' | 'NoOpinion';
  /** What `reason()` gives (default: empty). */
  reason?: string;
  /** What `error()` gives; when set, `errored()` is true. */
  error?: string;
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
/** A resource check being built (`authorizer.group(g).resource(r)…`): the selectors as written. */
export class ResourceCheckValue {
  constructor(
    readonly authorizer: AuthorizerValue,
    readonly fields: { group?: string; resource?: string } & { [F in ResourceField]?: string },
  ) {}
  with(field: ResourceField, value: string): ResourceCheckValue {
    return new ResourceCheckValue(this.authorizer, { ...this.fields, [field]: value });
  }
}
class DecisionValue {
  constructor(
    readonly decision: AuthorizationDecision['decision'],
    readonly reason: string,
    /** The authorizer's error; undefined when it gave none (`errored()` is false). */
    readonly error: string | undefined,
  ) {}
}

/** `authorizer.serviceAccount(namespace, name)`: the names checked, the account's two groups. */
function serviceAccountAuthorizer(a: AuthorizerValue, namespace: string, name: string): AuthorizerValue {
  const user = serviceAccountUser(namespace, name);
  return new AuthorizerValue(a.authorize, { username: user.username, groups: [...user.groups] });
}

const DECISIONS: ReadonlySet<unknown> = new Set(['Allow', 'Deny', 'NoOpinion']);

/**
 * Asks the Authorize function. One that throws gives no opinion and the error it threw; one that
 * answers without a decision of the three gives no opinion and an error saying so.
 */
function decide(authorizer: AuthorizerValue, attributes: Omit<AuthorizationAttributes, 'user'>): DecisionValue {
  let answer: Partial<AuthorizationDecision> | undefined;
  try {
    answer = authorizer.authorize({ user: authorizer.user, ...attributes });
  } catch (err) {
    return new DecisionValue('NoOpinion', '', err instanceof Error ? err.message : String(err));
  }
  if (!DECISIONS.has(answer?.decision))
    return new DecisionValue(
      'NoOpinion',
      '',
      `Authorize gave no decision (Allow, Deny or NoOpinion): ${String(answer?.decision)}`,
    );
  const reason = typeof answer!.reason === 'string' ? answer!.reason : '';
  const error = answer!.error === undefined ? undefined : String(answer!.error);
  return new DecisionValue(answer!.decision!, reason, error);
}

/**
 * The attributes of a resource check as the API server builds them: a selector written empty is
 * left out; another is parsed, handing the authorizer its requirements (none when it parses to
 * none) or, when it does not parse, the parsing error and no requirements. The check goes on.
 */
function resourceAttributes(fields: ResourceCheckValue['fields']): Omit<AuthorizationAttributes, 'user' | 'verb'> {
  const { fieldSelector, labelSelector, ...out } = fields;
  const attributes: Omit<AuthorizationAttributes, 'user' | 'verb'> = out;
  if (fieldSelector) {
    const parsed = parseFieldSelector(fieldSelector);
    if ('error' in parsed) attributes.fieldSelectorParsingError = parsed.error;
    else if (parsed.requirements.length > 0) attributes.fieldSelectorRequirements = parsed.requirements;
  }
  if (labelSelector) {
    const parsed = parseLabelSelector(labelSelector);
    if ('error' in parsed) attributes.labelSelectorParsingError = parsed.error;
    else if (parsed.requirements.length > 0) attributes.labelSelectorRequirements = parsed.requirements;
  }
  return attributes;
}

/** `authorizer.path(p)`: an error when p is empty or blank (Go's TrimSpace). */
function pathCheck(a: AuthorizerValue, path: string): PathCheckValue {
  if (trim(path) === '') throw new Error('path must not be empty');
  return new PathCheckValue(a, path);
}

/** `….group(g).resource(r)`: an error when r is empty or blank. */
function resourceCheck(g: GroupCheckValue, resource: string): ResourceCheckValue {
  if (trim(resource) === '') throw new Error('resource must not be empty');
  return new ResourceCheckValue(g.authorizer, { group: g.group, resource });
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
    .registerFunction(`${AUTHORIZER}.path(string): ${PATH_CHECK}`, pathCheck)
    .registerFunction(
      `${AUTHORIZER}.group(string): ${GROUP_CHECK}`,
      (a: AuthorizerValue, group: string) => new GroupCheckValue(a, group),
    )
    .registerFunction(`${AUTHORIZER}.serviceAccount(string, string): ${AUTHORIZER}`, serviceAccountAuthorizer)
    .registerFunction(`${GROUP_CHECK}.resource(string): ${RESOURCE_CHECK}`, resourceCheck)
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
      decide(r.authorizer, { verb, ...resourceAttributes(r.fields) }),
    )
    .registerFunction(`${PATH_CHECK}.check(string): ${DECISION}`, (p: PathCheckValue, verb: string) =>
      decide(p.authorizer, { verb, path: p.path }),
    )
    .registerFunction(`${DECISION}.allowed(): bool`, (d: DecisionValue) => d.decision === 'Allow')
    .registerFunction(`${DECISION}.reason(): string`, (d: DecisionValue) => d.reason)
    .registerFunction(`${DECISION}.errored(): bool`, (d: DecisionValue) => d.error !== undefined)
    .registerFunction(`${DECISION}.error(): string`, (d: DecisionValue) => d.error ?? '');
}
