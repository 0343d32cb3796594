import { WebhookError } from '../errors.ts';
/**
 * Webhook URLs as the Kubernetes API server reads them: a port of Go's `net/url.Parse` (the parts
 * that decide scheme, userinfo, host, query and fragment) and of k8s.io/apiserver
 * `pkg/util/webhook/validation.go` `ValidateWebhookURL`. WHATWG `new URL()` differs in ways that
 * matter: it finds the host "prod" in `https:///prod`, where Go finds none and the API server
 * refuses the configuration.
 */

/** What Go's `url.Parse` returns, the fields the API server looks at. */
export interface GoUrl {
  /** Lower-cased scheme, empty when there is none. */
  scheme: string;
  /** `scheme:opaque` URLs (no `/` after the scheme); encoded. */
  opaque: string;
  /** Userinfo, present when the authority holds an `@` (even an empty one). */
  user?: { username: string; password?: string };
  /** `host[:port]`, unescaped. */
  host: string;
  /** Unescaped path. */
  path: string;
  /** Query without `?`, as written. */
  rawQuery: string;
  /** A `?` with nothing after it. */
  forceQuery: boolean;
  /** Unescaped fragment without `#`. */
  fragment: string;
}

/** A parse failure, with Go's message (`parse "<url>": <reason>`). */
export class GoUrlError extends WebhookError {
  readonly code = 'URL_INVALID';
  constructor(url: string, reason: string) {
    super(`parse ${goQuote(url)}: ${reason}`);
    this.name = 'GoUrlError';
  }
}

/** Go's `%q`, close enough for the printable strings these messages hold. */
const goQuote = (s: string): string => JSON.stringify(s);

type Mode = 'path' | 'host' | 'zone' | 'userPassword' | 'fragment';

const isAlnum = (c: string) => (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9');
const isHex = (c: string | undefined) => c !== undefined && /^[0-9a-fA-F]$/.test(c);

/** Go's `shouldEscape`, for the modes parsing uses (byte values below 0x80). */
function shouldEscape(c: string, mode: Mode): boolean {
  if (isAlnum(c)) return false;
  if ((mode === 'host' || mode === 'zone') && '!$&\'()*+,;=:[]<>"'.includes(c)) return false;
  if ('-_.~'.includes(c)) return false;
  if ('$&+,/:;=?@'.includes(c)) {
    if (mode === 'path') return c === '?';
    if (mode === 'userPassword') return c === '@' || c === '/' || c === '?' || c === ':';
    if (mode === 'fragment') return false;
  }
  if (mode === 'fragment' && '!()*'.includes(c)) return false;
  return true;
}

/** Go's `unescape`: checks `%XX` escapes (and, in hosts, the characters) and decodes them. */
function percentDecode(s: string, mode: Mode): string {
  for (let i = 0; i < s.length; ) {
    const c = s[i]!;
    if (c === '%') {
      if (i + 2 >= s.length || !isHex(s[i + 1]) || !isHex(s[i + 2]))
        throw new Error(`invalid URL escape ${goQuote(s.slice(i, i + 3))}`);
      const value = parseInt(s.slice(i + 1, i + 3), 16);
      // RFC 3986: hosts may %-encode only non-ASCII bytes; RFC 6874 adds %25 for IPv6 zones.
      if (mode === 'host' && value < 0x80 && s.slice(i, i + 3) !== '%25')
        throw new Error(`invalid URL escape ${goQuote(s.slice(i, i + 3))}`);
      if (
        mode === 'zone' &&
        s.slice(i, i + 3) !== '%25' &&
        value !== 0x20 &&
        value < 0x80 &&
        shouldEscape(String.fromCharCode(value), 'host')
      ) {
        throw new Error(`invalid URL escape ${goQuote(s.slice(i, i + 3))}`);
      }
      i += 3;
    } else {
      if ((mode === 'host' || mode === 'zone') && c.charCodeAt(0) < 0x80 && shouldEscape(c, mode))
        throw new Error(`invalid character ${goQuote(c)} in host name`);
      i++;
    }
  }
  if (!s.includes('%')) return s;
  // Decode as bytes, so multi-byte escapes become their characters.
  const bytes: number[] = [];
  const encoder = new TextEncoder();
  for (let i = 0; i < s.length; i++) {
    if (s[i] === '%') {
      bytes.push(parseInt(s.slice(i + 1, i + 3), 16));
      i += 2;
    } else {
      const code = s.codePointAt(i)!;
      const char = String.fromCodePoint(code);
      bytes.push(...encoder.encode(char));
      i += char.length - 1;
    }
  }
  return new TextDecoder().decode(new Uint8Array(bytes));
}

/** Go's `getScheme`: `[a-zA-Z][a-zA-Z0-9+.-]*:` or none. */
function getScheme(raw: string): [string, string] {
  for (let i = 0; i < raw.length; i++) {
    const c = raw[i]!;
    if ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z')) continue;
    if ((c >= '0' && c <= '9') || c === '+' || c === '-' || c === '.') {
      if (i === 0) return ['', raw];
      continue;
    }
    if (c === ':') {
      if (i === 0) throw new Error('missing protocol scheme');
      return [raw.slice(0, i), raw.slice(i + 1)];
    }
    return ['', raw];
  }
  return ['', raw];
}

/** `""` or `:` followed by digits only. */
function validOptionalPort(port: string): boolean {
  return port === '' || /^:[0-9]*$/.test(port);
}

/** Go's `validUserinfo`: RFC 3986 userinfo characters, plus `%` and `@`. */
function validUserinfo(s: string): boolean {
  return /^[A-Za-z0-9\-._:~!$&'()*+,;=%@]*$/.test(s);
}

function parseHost(host: string): string {
  if (host.startsWith('[')) {
    const i = host.lastIndexOf(']');
    if (i < 0) throw new Error("missing ']' in host");
    const colonPort = host.slice(i + 1);
    if (!validOptionalPort(colonPort)) throw new Error(`invalid port ${goQuote(colonPort)} after host`);
    const zone = host.slice(0, i).indexOf('%25');
    if (zone >= 0)
      return (
        percentDecode(host.slice(0, zone), 'host') +
        percentDecode(host.slice(zone, i), 'zone') +
        percentDecode(host.slice(i), 'host')
      );
  } else {
    const i = host.lastIndexOf(':');
    if (i !== -1 && !validOptionalPort(host.slice(i)))
      throw new Error(`invalid port ${goQuote(host.slice(i))} after host`);
  }
  return percentDecode(host, 'host');
}

function parseAuthority(authority: string): { user?: GoUrl['user']; host: string } {
  const at = authority.lastIndexOf('@');
  const host = parseHost(at < 0 ? authority : authority.slice(at + 1));
  if (at < 0) return { host };
  const userinfo = authority.slice(0, at);
  if (!validUserinfo(userinfo)) throw new Error('net/url: invalid userinfo');
  const colon = userinfo.indexOf(':');
  if (colon < 0) return { user: { username: percentDecode(userinfo, 'userPassword') }, host };
  return {
    user: {
      username: percentDecode(userinfo.slice(0, colon), 'userPassword'),
      password: percentDecode(userinfo.slice(colon + 1), 'userPassword'),
    },
    host,
  };
}

/** Go's `parse(rawURL, viaRequest=false)`. */
function parseReference(raw: string): GoUrl {
  // Control characters: bytes below 0x20 and DEL.
  if (/[\x00-\x1f\x7f]/.test(raw)) throw new Error('net/url: invalid control character in URL');
  const url: GoUrl = { scheme: '', opaque: '', host: '', path: '', rawQuery: '', forceQuery: false, fragment: '' };
  if (raw === '*') return { ...url, path: '*' };
  let [scheme, rest] = getScheme(raw);
  url.scheme = scheme.toLowerCase();
  if (rest.endsWith('?') && rest.indexOf('?') === rest.length - 1) {
    url.forceQuery = true;
    rest = rest.slice(0, -1);
  } else {
    const q = rest.indexOf('?');
    if (q >= 0) [rest, url.rawQuery] = [rest.slice(0, q), rest.slice(q + 1)];
  }
  if (!rest.startsWith('/')) {
    if (url.scheme) return { ...url, opaque: rest };
    if (rest.split('/', 1)[0]!.includes(':')) throw new Error('first path segment in URL cannot contain colon');
  }
  if ((url.scheme || !rest.startsWith('///')) && rest.startsWith('//')) {
    let authority = rest.slice(2);
    rest = '';
    const slash = authority.indexOf('/');
    if (slash >= 0) [authority, rest] = [authority.slice(0, slash), authority.slice(slash)];
    const { user, host } = parseAuthority(authority);
    if (user) url.user = user;
    url.host = host;
  }
  url.path = percentDecode(rest, 'path');
  return url;
}

/** Go's `url.Parse`; throws {@link GoUrlError} where Go returns an error. */
export function parseGoUrl(raw: string): GoUrl {
  const hash = raw.indexOf('#');
  const beforeFragment = hash < 0 ? raw : raw.slice(0, hash);
  let url: GoUrl;
  try {
    url = parseReference(beforeFragment);
  } catch (err) {
    throw new GoUrlError(beforeFragment, (err as Error).message);
  }
  if (hash < 0 || hash === raw.length - 1) return url;
  try {
    url.fragment = percentDecode(raw.slice(hash + 1), 'fragment');
  } catch (err) {
    throw new GoUrlError(raw, (err as Error).message);
  }
  return url;
}

/**
 * The API server's `ValidateWebhookURL(url, forceHttps=true)`: every broken rule, in its order;
 * empty when the API server accepts the URL. An empty query (`?`) or fragment (`#`) is accepted,
 * as the API server accepts it.
 */
export function validateWebhookUrl(url: string): string[] {
  let parsed: GoUrl;
  try {
    parsed = parseGoUrl(url);
  } catch (err) {
    return [`not a valid URL: ${(err as Error).message}`];
  }
  const problems: string[] = [];
  if (parsed.scheme !== 'https') problems.push(`scheme must be https, got ${JSON.stringify(parsed.scheme)}`);
  if (!parsed.host) problems.push('host must be provided (desired format: https://host[/path])');
  if (parsed.user) problems.push('user information (user:password@) is not permitted');
  if (parsed.fragment) problems.push(`fragments are not permitted, got ${JSON.stringify(parsed.fragment)}`);
  if (parsed.rawQuery) problems.push(`query parameters are not permitted, got ${JSON.stringify(parsed.rawQuery)}`);
  return problems;
}
