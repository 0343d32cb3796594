/**
 * The Kubernetes URL library (k8s.io/apiserver/pkg/cel/library/urls.go): `url()`, `isURL()`
 * and the getters, following Go's net/url as that library calls it: `url.ParseRequestURI`
 * decides what is a URL (an absolute URI or an absolute path, fragment included), and
 * `url.Parse` gives the parts. The WHATWG URL parser of JavaScript normalises (lower-cases
 * hosts, drops default ports, resolves dots), so the API server's answers need this one.
 */
import { goQuote } from './go.ts';

/** A parsed URL, as Go's url.URL holds it. */
export class UrlValue {
  constructor(
    readonly scheme: string,
    readonly opaque: string,
    /** The userinfo, percent-decoded, or undefined without an `@`. */
    readonly user: string | undefined,
    /** host[:port] as written, percent-decoded. */
    readonly host: string,
    /** The path, percent-decoded. */
    readonly path: string,
    /** The path as written, when it differs from the default encoding of `path`. */
    readonly rawPath: string,
    readonly rawQuery: string,
    readonly forceQuery: boolean,
    readonly fragment: string,
  ) {}

  /** Go's URL.Hostname(): the host without port, IPv6 brackets removed. */
  hostname(): string {
    return splitHostPort(this.host).host;
  }

  /** Go's URL.Port(): the port digits, or ''. */
  port(): string {
    return splitHostPort(this.host).port;
  }

  /** Go's URL.EscapedPath(). */
  escapedPath(): string {
    if (this.rawPath && validEncoded(this.rawPath) && percentDecode(this.rawPath, 'path') === this.path)
      return this.rawPath;
    if (this.path === '*') return '*';
    return percentEncode(this.path);
  }

  /**
   * Go's URL.Query(): the query in matrix form, keys and values unescaped; bad pairs left out.
   * Linear in the query: a repeated key appends to its list in place.
   */
  query(): Map<string, string[]> {
    const out = new Map<string, string[]>();
    for (const pair of this.rawQuery.split('&')) {
      if (!pair || pair.includes(';')) continue;
      const eq = pair.indexOf('=');
      const key = queryUnescape(eq < 0 ? pair : pair.slice(0, eq));
      const value = queryUnescape(eq < 0 ? '' : pair.slice(eq + 1));
      if (key === undefined || value === undefined) continue;
      const values = out.get(key);
      if (values) values.push(value);
      else out.set(key, [value]);
    }
    return out;
  }

  /** Whether two URLs have the same parts. */
  equals(other: UrlValue): boolean {
    return (
      this.scheme === other.scheme &&
      this.opaque === other.opaque &&
      this.user === other.user &&
      this.host === other.host &&
      this.escapedPath() === other.escapedPath() &&
      this.rawQuery === other.rawQuery &&
      this.forceQuery === other.forceQuery &&
      this.fragment === other.fragment
    );
  }
}

/** A URL that Go's net/url refuses, with its message. */
export class UrlError extends Error {
  override name = 'UrlError';
}

const HEX = '0123456789ABCDEF';
const isHex = (c: string) => /^[0-9a-fA-F]$/.test(c);
const isAlnum = (c: string) => /^[A-Za-z0-9]$/.test(c);

function validOptionalPort(port: string): boolean {
  return port === '' || /^:[0-9]*$/.test(port);
}

type Mode = 'path' | 'host' | 'user' | 'query';

/** Go's shouldEscape for the modes the parser uses (one ASCII character). */
function shouldEscape(c: string, mode: Mode): boolean {
  if (isAlnum(c)) return false;
  if (mode === 'host' && `!$&'()*+,;=:[]<>"`.includes(c)) return false;
  if ('-_.~'.includes(c)) return false;
  if ('$&+,/:;=?@'.includes(c)) {
    if (mode === 'path') return c === '?';
    if (mode === 'user') return c === '@' || c === '/' || c === '?' || c === ':';
    if (mode === 'query') return true;
    return false;
  }
  return true;
}

/** Go's unescape: percent-decoding, with its checks; undefined where Go errs. */
function percentDecode(s: string, mode: Mode): string | undefined {
  const bytes: number[] = [];
  const encoder = new TextEncoder();
  for (let i = 0; i < s.length; i++) {
    const c = s[i]!;
    if (c === '%') {
      const h = s.slice(i + 1, i + 3);
      if (h.length < 2 || !isHex(h[0]!) || !isHex(h[1]!)) return undefined;
      const byte = parseInt(h, 16);
      // A host may hold no percent-escaped ASCII but %25 (the IPv6 zone separator).
      if (mode === 'host' && byte < 0x80 && h !== '25') return undefined;
      bytes.push(byte);
      i += 2;
    } else if (c === '+' && mode === 'query') {
      bytes.push(0x20);
    } else {
      const code = c.charCodeAt(0);
      if (mode === 'host' && code < 0x80 && shouldEscape(c, 'host')) return undefined;
      if (code < 0x80) bytes.push(code);
      else for (const b of encoder.encode(c)) bytes.push(b);
    }
  }
  return new TextDecoder().decode(new Uint8Array(bytes));
}

function queryUnescape(s: string): string | undefined {
  return percentDecode(s, 'query');
}

/** Go's percentEncode(s, encodePath). */
function percentEncode(s: string): string {
  let out = '';
  for (const byte of new TextEncoder().encode(s)) {
    const c = String.fromCharCode(byte);
    out += byte < 0x80 && !shouldEscape(c, 'path') ? c : `%${HEX[byte >> 4]}${HEX[byte & 15]}`;
  }
  return out;
}

/** Go's validEncoded(s, encodePath). */
function validEncoded(s: string): boolean {
  for (const c of s) {
    if (`!$&'()*+,;=:@[]%`.includes(c)) continue;
    if (c.charCodeAt(0) >= 0x80 || shouldEscape(c, 'path')) return false;
  }
  return true;
}

function parseHost(host: string): string {
  if (host.startsWith('[')) {
    const close = host.lastIndexOf(']');
    if (close < 0) throw new UrlError("missing ']' in host");
    const colonPort = host.slice(close + 1);
    if (!validOptionalPort(colonPort)) throw new UrlError(`invalid port ${JSON.stringify(colonPort)} after host`);
  } else {
    const colon = host.lastIndexOf(':');
    if (colon !== -1 && !validOptionalPort(host.slice(colon)))
      throw new UrlError(`invalid port ${JSON.stringify(host.slice(colon))} after host`);
  }
  const decoded = percentDecode(host, 'host');
  if (decoded === undefined) throw new UrlError(`invalid host ${JSON.stringify(host)}`);
  return decoded;
}

function parseAuthority(authority: string): { user: string | undefined; host: string } {
  const at = authority.lastIndexOf('@');
  const host = parseHost(at < 0 ? authority : authority.slice(at + 1));
  if (at < 0) return { user: undefined, host };
  const userinfo = authority.slice(0, at);
  if (!/^[A-Za-z0-9\-._:~!$&'()*+,;=%@]*$/.test(userinfo)) throw new UrlError('net/url: invalid userinfo');
  const user = percentDecode(userinfo, 'user');
  if (user === undefined) throw new UrlError('invalid URL escape in userinfo');
  return { user, host };
}

/** Go's url.parse(rawURL, viaRequest), the fragment already cut off. */
function parse(raw: string, viaRequest: boolean): ConstructorParameters<typeof UrlValue> {
  if (/[\x00-\x1f\x7f]/.test(raw)) throw new UrlError('net/url: invalid control character in URL');
  if (raw === '' && viaRequest) throw new UrlError('empty url');
  if (raw === '*') return ['', '', undefined, '', '*', '', '', false, ''];
  let scheme = '';
  let rest = raw;
  const m = /^([A-Za-z][A-Za-z0-9+\-.]*):/.exec(raw);
  if (m) {
    scheme = m[1]!.toLowerCase();
    rest = raw.slice(m[0].length);
  } else if (raw.startsWith(':')) {
    throw new UrlError('missing protocol scheme');
  }
  let rawQuery = '';
  let forceQuery = false;
  if (rest.endsWith('?') && rest.indexOf('?') === rest.length - 1) {
    forceQuery = true;
    rest = rest.slice(0, -1);
  } else {
    const q = rest.indexOf('?');
    if (q >= 0) [rest, rawQuery] = [rest.slice(0, q), rest.slice(q + 1)];
  }
  if (!rest.startsWith('/')) {
    if (scheme) return [scheme, rest, undefined, '', '', '', rawQuery, forceQuery, ''];
    if (viaRequest) throw new UrlError('invalid URI for request');
    if (rest.split('/')[0]!.includes(':')) throw new UrlError('first path segment in URL cannot contain colon');
  }
  let user: string | undefined;
  let host = '';
  if ((scheme || (!viaRequest && !rest.startsWith('///'))) && rest.startsWith('//')) {
    let authority = rest.slice(2);
    rest = '';
    const slash = authority.indexOf('/');
    if (slash >= 0) [authority, rest] = [authority.slice(0, slash), authority.slice(slash)];
    ({ user, host } = parseAuthority(authority));
  }
  const path = percentDecode(rest, 'path');
  if (path === undefined) throw new UrlError(`invalid URL escape in ${JSON.stringify(rest)}`);
  return [scheme, '', user, host, path, percentEncode(path) === rest ? '' : rest, rawQuery, forceQuery, ''];
}

/** Go's `url.ParseRequestURI(s)` error text (`parse "<s>": <reason>`), or undefined when it accepts s. */
export function requestUriProblem(s: string): string | undefined {
  try {
    parse(s, true);
    return undefined;
  } catch (err) {
    return `parse ${goQuote(s)}: ${(err as Error).message}`;
  }
}

/** `isURL(s)`: Go's url.ParseRequestURI accepts s. */
export function isUrl(s: string): boolean {
  try {
    parse(s, true);
    return true;
  } catch {
    return false;
  }
}

/** `url(s)`: s checked by url.ParseRequestURI, then read by url.Parse; an error for what Go refuses. */
export function parseUrl(s: string): UrlValue {
  try {
    parse(s, true);
    const hash = s.indexOf('#');
    const parts = parse(hash < 0 ? s : s.slice(0, hash), false);
    if (hash >= 0) {
      const fragment = percentDecode(s.slice(hash + 1), 'path');
      if (fragment === undefined) throw new UrlError('invalid URL escape in fragment');
      parts[8] = fragment;
    }
    return new UrlValue(...parts);
  } catch (err) {
    // Go's *url.Error: `parse "<url>": <reason>`.
    throw new UrlError(`URL parse error during conversion from string: parse ${goQuote(s)}: ${(err as Error).message}`);
  }
}

/** Go's url.splitHostPort: the port after the last colon when it is a valid one, brackets taken off the host. */
function splitHostPort(hostPort: string): { host: string; port: string } {
  let host = hostPort;
  let port = '';
  const colon = host.lastIndexOf(':');
  if (colon !== -1 && validOptionalPort(host.slice(colon))) {
    port = host.slice(colon + 1);
    host = host.slice(0, colon);
  }
  if (host.startsWith('[') && host.endsWith(']')) host = host.slice(1, -1);
  return { host, port };
}
