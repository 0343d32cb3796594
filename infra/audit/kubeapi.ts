import { createHash, X509Certificate } from 'node:crypto';
import { existsSync, readFileSync } from 'node:fs';
import { request as httpsRequest, type RequestOptions } from 'node:https';
import { request as httpRequest } from 'node:http';
import { KlwError } from '../errors.ts';
import type { AuthorizationAttributes, AuthorizationDecision } from '../../packages/kube-cel/src/index.ts';
import { execCredential, type KubeConnection } from './kubeconfig.ts';
import { DEFAULT_KUBE_LIMITS, formatMs, type KubeLimits } from './limits.ts';
import type { KubeObject } from '../../lib/internal.ts';
import { valueAt } from '../json.ts';

/** An error answer of the API server. */
export class KubeApiError extends KlwError {
  constructor(
    readonly status: number,
    readonly path: string,
    message: string,
  ) {
    super(`${path}: HTTP ${status}${message ? `: ${message}` : ''}`);
  }
}

/** Largest API answer read (a list page); pages are asked for with `limit`, so this is generous. */
const MAX_RESPONSE_BYTES = 256 * 1024 * 1024;
/** An exec plugin's credential this close to its expirationTimestamp is renewed before a request (EKS tokens last 15 minutes). */
export const EXEC_RENEW_BEFORE_MS = 60_000;

/** When one request gives up, and the error it gives up with. */
interface RequestDeadline {
  ms: number;
  error: () => KlwError;
}

/** `null`, `a string`, `an array`: what a list item that is not an object is. */
function describeValue(value: unknown): string {
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'an array';
  return `a ${typeof value}`;
}

/** A minimal Kubernetes API client over HTTPS: JSON GET and POST, and paginated lists, within {@link KubeLimits}. */
export class KubeClient {
  readonly limits: KubeLimits;
  /** The exec plugin run under way, so concurrent requests wait for one run. */
  private renewing: Promise<void> | undefined;

  constructor(
    readonly connection: KubeConnection,
    limits: Partial<KubeLimits> = {},
  ) {
    this.limits = { ...DEFAULT_KUBE_LIMITS, ...limits };
  }

  /**
   * Sends one request; resolves with the parsed JSON body, rejects with {@link KubeApiError} on a
   * non-2xx answer, with a KlwError when the whole answer has not arrived within the request
   * limit (or `deadline`). With an exec credential plugin, the plugin runs again first when its
   * credential is within {@link EXEC_RENEW_BEFORE_MS} of expiring, and once after a 401 (then
   * the request is sent again), as client-go does.
   */
  async request(method: 'GET' | 'POST', path: string, body?: unknown, deadline?: RequestDeadline): Promise<unknown> {
    const c = this.connection;
    const expiring = c.expiresAt !== undefined && Date.now() >= c.expiresAt - EXEC_RENEW_BEFORE_MS;
    if (c.exec && expiring) await this.renewCredential();
    const sent = c.token ?? c.cert;
    try {
      return await this.send(method, path, body, deadline);
    } catch (err) {
      if (!(err instanceof KubeApiError) || err.status !== 401 || !c.exec) throw err;
      // Renewed unless another request already did since this one was sent.
      if ((c.token ?? c.cert) === sent) await this.renewCredential();
      return this.send(method, path, body, deadline);
    }
  }

  /** Runs the exec plugin again and takes its credential; one run at a time. */
  private renewCredential(): Promise<void> {
    const c = this.connection;
    this.renewing ??= execCredential(c.exec!.config, c.exec!.base, c.exec!.timeoutMs)
      .then((renewed) => {
        delete c.expiresAt;
        Object.assign(c, renewed);
      })
      .finally(() => (this.renewing = undefined));
    return this.renewing;
  }

  /** One attempt of {@link request}. */
  private send(method: 'GET' | 'POST', path: string, body: unknown, deadline?: RequestDeadline): Promise<unknown> {
    const c = this.connection;
    const url = new URL(path, `${c.server}/`);
    const text = body === undefined ? undefined : JSON.stringify(body);
    const headers: Record<string, string> = { accept: 'application/json', 'user-agent': 'klw-audit' };
    if (text !== undefined) headers['content-type'] = 'application/json';
    const token = c.tokenFile ? readFileSync(c.tokenFile, 'utf8').trim() : c.token;
    if (token) headers.authorization = `Bearer ${token}`;
    else if (c.username !== undefined)
      headers.authorization = `Basic ${Buffer.from(`${c.username}:${c.password ?? ''}`).toString('base64')}`;
    const options: RequestOptions = { method, headers };
    if (c.ca) options.ca = c.ca;
    if (c.cert) options.cert = c.cert;
    if (c.key) options.key = c.key;
    if (c.insecure) options.rejectUnauthorized = false;
    if (c.serverName) options.servername = c.serverName;
    const send = url.protocol === 'http:' ? httpRequest : httpsRequest;
    const { requestMs } = this.limits;
    const limit = deadline ?? {
      ms: requestMs,
      error: () => {
        const within = `within ${formatMs(requestMs)} (--request-timeout)`;
        return new KlwError(`${method} ${url.pathname} at ${c.server}: no complete answer ${within}`);
      },
    };
    return new Promise((resolvePromise, reject) => {
      let settled = false;
      const settle = (err: unknown, value?: unknown) => {
        if (settled) return;
        settled = true;
        clearTimeout(timer);
        if (err) reject(err);
        else resolvePromise(value);
      };
      const req = send(url, options, (res) => {
        const chunks: Buffer[] = [];
        let size = 0;
        res.on('data', (chunk: Buffer) => {
          size += chunk.length;
          if (size > MAX_RESPONSE_BYTES)
            req.destroy(new KlwError(`${url.pathname}: answer larger than ${MAX_RESPONSE_BYTES} bytes`));
          else chunks.push(chunk);
        });
        res.on('end', () => {
          const raw = Buffer.concat(chunks).toString('utf8');
          let parsed: unknown;
          try {
            parsed = raw ? JSON.parse(raw) : undefined;
          } catch {
            parsed = undefined;
          }
          const status = res.statusCode ?? 0;
          const message = (valueAt(parsed, 'message') as string | undefined) ?? raw.slice(0, 200).trim();
          if (status < 200 || status > 299) settle(new KubeApiError(status, url.pathname, message));
          else if (parsed === undefined) settle(new KlwError(`${url.pathname}: the API server did not answer JSON`));
          else settle(undefined, parsed);
        });
        res.on('error', (err) => {
          settle(err instanceof KlwError ? err : new KlwError(`${url.pathname}: the answer broke off: ${err.message}`));
        });
      });
      // The whole exchange, not each idle gap: a server trickling its answer is cut off all the same.
      const timer = setTimeout(() => {
        const err = limit.error();
        settle(err);
        req.destroy(err);
      }, limit.ms);
      req.on('error', (err) => {
        const reach = `cannot reach the API server at ${c.server} (${c.source})`;
        settle(err instanceof KlwError ? err : new KlwError(`${reach}: ${(err as Error).message}`));
      });
      req.end(text);
    });
  }

  /**
   * Lists a collection page by page (`limit` and `continue`), calling `onPage` with each page's
   * items and the number of items the server says remain (when it says). When a continue token
   * has expired (HTTP 410: the snapshot it pages through was compacted away while the pages
   * were being processed), the list restarts once from the beginning as client-go's pager does:
   * one full list without `limit`, whose page comes with `restarted` true and holds the items
   * already seen again. A KlwError naming the collection and the server ends a list that is not
   * a list, holds an item that is not an object, repeats a continue token (its pages would never
   * end), has more than {@link KubeLimits.maxPages} pages, or takes the server more than
   * {@link KubeLimits.listMs} in all.
   */
  async list(
    path: string,
    query: Record<string, string>,
    limit: number,
    onPage: (items: KubeObject[], remaining: number | undefined, restarted: boolean) => Promise<void> | void,
  ): Promise<void> {
    const { requestMs, listMs, maxPages } = this.limits;
    const where = `listing ${path} at ${this.connection.server}`;
    const listStalled = () => {
      return new KlwError(`${where}: not done within ${formatMs(listMs)} of the API server's time (--list-timeout)`);
    };
    // Digests of the continue tokens seen: 32 bytes each however long the server makes them.
    const tokens = new Set<string>();
    let token: string | undefined;
    let restarted = false;
    let pages = 0;
    let waited = 0;
    for (;;) {
      if (++pages > maxPages) throw new KlwError(`${where}: more than ${maxPages} pages (--max-pages)`);
      const left = listMs - waited;
      if (left <= 0) throw listStalled();
      const params = new URLSearchParams(query);
      if (!restarted) params.set('limit', String(limit));
      if (token) params.set('continue', token);
      let page: unknown;
      const started = performance.now();
      try {
        const search = params.toString();
        const deadline = left < requestMs ? { ms: left, error: listStalled } : undefined;
        page = await this.request('GET', search ? `${path}?${search}` : path, undefined, deadline);
      } catch (err) {
        if (!(err instanceof KubeApiError) || err.status !== 410 || !token || restarted) throw err;
        restarted = true;
        token = undefined;
        continue;
      } finally {
        waited += performance.now() - started;
      }
      const items = valueAt(page, 'items');
      if (!Array.isArray(items)) throw new KlwError(`${where}: the answer is not a list`);
      for (let i = 0; i < items.length; i++) {
        const item = items[i];
        if (typeof item !== 'object' || item === null || Array.isArray(item)) {
          throw new KlwError(`${where}: items[${i}] of page ${pages} is ${describeValue(item)}, not an object`);
        }
      }
      const remaining = valueAt(page, 'metadata', 'remainingItemCount');
      await onPage(items as KubeObject[], typeof remaining === 'number' ? remaining : undefined, restarted);
      token = valueAt(page, 'metadata', 'continue') ? String(valueAt(page, 'metadata', 'continue')) : undefined;
      if (!token) return;
      const digest = createHash('sha256').update(token).digest('base64');
      if (tokens.has(digest)) {
        const endless = "repeats an earlier page's continue token; its pages would never end";
        throw new KlwError(`${where}: page ${pages} ${endless}`);
      }
      tokens.add(digest);
    }
  }
}

/** Who the API server would say a connection's user is, when it cannot tell us: from the client certificate or a service account token. */
export function identityFromCredentials(
  connection: KubeConnection,
): { username: string; groups: string[] } | undefined {
  if (connection.cert) {
    try {
      const subject = new X509Certificate(connection.cert).subject.split('\n');
      const cn = subject.find((s) => s.startsWith('CN='))?.slice(3);
      const groups = subject.filter((s) => s.startsWith('O=')).map((s) => s.slice(2));
      if (cn) return { username: cn, groups: [...groups, 'system:authenticated'] };
    } catch {
      // not a certificate we can read: fall through
    }
  }
  const token =
    connection.tokenFile && existsSync(connection.tokenFile)
      ? readFileSync(connection.tokenFile, 'utf8').trim()
      : connection.token;
  const payload = token?.split('.')[1];
  if (payload) {
    try {
      const claims: unknown = JSON.parse(Buffer.from(payload, 'base64url').toString('utf8'));
      const sub = String(valueAt(claims, 'sub') ?? '');
      const match = /^system:serviceaccount:([^:]+):[^:]+$/.exec(sub);
      if (match)
        return {
          username: sub,
          groups: ['system:serviceaccounts', `system:serviceaccounts:${match[1]}`, 'system:authenticated'],
        };
    } catch {
      // not a JWT
    }
  }
  if (connection.username) return { username: connection.username, groups: ['system:authenticated'] };
  return undefined;
}

/** A user as the API server's authentication reviews give it. */
export type AuthenticatedUser = { username: string; uid?: string; groups?: string[]; extra?: Record<string, string[]> };

/**
 * The user the API server authenticates this connection as: a SelfSubjectReview (1.26+), else a
 * TokenReview of our own token, else what the credentials say.
 */
export async function whoAmI(client: KubeClient): Promise<AuthenticatedUser | undefined> {
  for (const version of ['v1', 'v1beta1', 'v1alpha1']) {
    try {
      const review = await client.request('POST', `/apis/authentication.k8s.io/${version}/selfsubjectreviews`, {
        apiVersion: `authentication.k8s.io/${version}`,
        kind: 'SelfSubjectReview',
      });
      const userInfo = valueAt(review, 'status', 'userInfo');
      if (valueAt(userInfo, 'username')) return userInfo as AuthenticatedUser;
    } catch (err) {
      if (!(err instanceof KubeApiError) || ![403, 404, 405].includes(err.status)) throw err;
    }
  }
  const c = client.connection;
  const token = c.tokenFile && existsSync(c.tokenFile) ? readFileSync(c.tokenFile, 'utf8').trim() : c.token;
  if (token) {
    try {
      const review = await client.request('POST', '/apis/authentication.k8s.io/v1/tokenreviews', {
        apiVersion: 'authentication.k8s.io/v1',
        kind: 'TokenReview',
        spec: { token },
      });
      const user = valueAt(review, 'status', 'user');
      if (valueAt(review, 'status', 'authenticated') && valueAt(user, 'username')) return user as AuthenticatedUser;
    } catch (err) {
      if (!(err instanceof KubeApiError)) throw err;
    }
  }
  return identityFromCredentials(c);
}

/** The selectors of an access review's resourceAttributes, each a list of requirements. */
type SelectorAttributes = Partial<
  Record<
    'fieldSelector' | 'labelSelector',
    { requirements: Array<{ key: string; operator?: string; values?: string[] }> }
  >
>;

/** The spec of a (Self)SubjectAccessReview. */
type AccessReviewSpec = Partial<{ user: string; uid: string; groups: string[]; extra: Record<string, string[]> }> & {
  nonResourceAttributes?: { path: string; verb: string };
  resourceAttributes?: SelectorAttributes & { verb: string } & Record<string, unknown>;
};

const LABEL_OPERATORS: Readonly<Record<string, string>> = {
  '=': 'In',
  '==': 'In',
  in: 'In',
  '!=': 'NotIn',
  notin: 'NotIn',
  exists: 'Exists',
  '!': 'DoesNotExist',
};

/**
 * A check's selector requirements as an access review's `fieldSelector` and `labelSelector`, as
 * the API server's webhook authorizer converts them: `=` and `in` as In, `!=` and `notin` as
 * NotIn, a bare key Exists, `!key` DoesNotExist; `>` and `<` left out (requirements narrow, so
 * one left out asks about more), and a selector with none left out.
 */
function selectorAttributes(attributes: AuthorizationAttributes): SelectorAttributes {
  const out: SelectorAttributes = {};
  const fields = (attributes.fieldSelectorRequirements ?? []).map((r) => ({
    key: r.field,
    operator: r.operator === '=' ? 'In' : 'NotIn',
    values: [r.value],
  }));
  if (fields.length) out.fieldSelector = { requirements: fields };
  const labels = (attributes.labelSelectorRequirements ?? [])
    .filter((r) => LABEL_OPERATORS[r.operator])
    .map((r) => ({
      key: r.key,
      operator: LABEL_OPERATORS[r.operator],
      ...(r.values.length ? { values: r.values } : {}),
    }));
  if (labels.length) out.labelSelector = { requirements: labels };
  return out;
}

/**
 * Asks the cluster's authorizer one `authorizer` check of a matchCondition: a
 * SelfSubjectAccessReview when `self` (the connection's own user, which needs no permission),
 * else a SubjectAccessReview naming the check's user (which needs `create` on
 * subjectaccessreviews). Allowed is `Allow`, denied `Deny`, neither `NoOpinion`; an
 * authorizer that failed to evaluate without deciding rejects, as the API server's check errors.
 */
export async function accessReview(
  client: KubeClient,
  attributes: AuthorizationAttributes,
  self: boolean,
): Promise<AuthorizationDecision> {
  const spec: AccessReviewSpec = {};
  if (attributes.path !== undefined) spec.nonResourceAttributes = { path: attributes.path, verb: attributes.verb };
  else {
    const resourceAttributes: NonNullable<AccessReviewSpec['resourceAttributes']> = { verb: attributes.verb };
    for (const field of ['group', 'resource', 'subresource', 'namespace', 'name'] as const)
      if (attributes[field]) resourceAttributes[field] = attributes[field];
    Object.assign(resourceAttributes, selectorAttributes(attributes));
    spec.resourceAttributes = resourceAttributes;
  }
  const kind = self ? 'SelfSubjectAccessReview' : 'SubjectAccessReview';
  if (!self) {
    const { username, uid, groups, extra } = attributes.user;
    spec.user = username;
    if (uid) spec.uid = uid;
    if (groups?.length) spec.groups = groups;
    if (extra && Object.keys(extra).length) spec.extra = extra;
  }
  const review = await client.request('POST', `/apis/authorization.k8s.io/v1/${kind.toLowerCase()}s`, {
    apiVersion: 'authorization.k8s.io/v1',
    kind,
    spec,
  });
  type Status = Partial<Record<'reason' | 'allowed' | 'denied' | 'evaluationError', unknown>>;
  const status = (valueAt(review, 'status') ?? {}) as Status;
  const reason = typeof status.reason === 'string' && status.reason ? { reason: status.reason } : {};
  if (status.allowed === true) return { decision: 'Allow', ...reason };
  if (status.denied === true) return { decision: 'Deny', ...reason };
  if (typeof status.evaluationError === 'string' && status.evaluationError) throw new KlwError(status.evaluationError);
  return { decision: 'NoOpinion', ...reason };
}
