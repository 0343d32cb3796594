import type { IncomingMessage, Server, ServerOptions, ServerResponse } from 'node:http';

/** How long the emulator's servers give a client, in ms; every client gets the same. */
export interface ServerTimeouts {
  /** From connecting (TLS handshake included) to the last header byte. */
  headersMs: number;
  /** From connecting to the last byte of the request body. */
  requestMs: number;
  /** A kept-alive connection with no request. */
  idleMs: number;
  /** To take a whole response once it is written; a client that stops reading is dropped after it. */
  sendMs: number;
}

/**
 * Short enough that slow or stalled clients cannot pile up, long enough for any real
 * client: the API server sends a review in well under a second, and gives up on a
 * webhook after at most 30 s anyway.
 */
export const DEFAULT_TIMEOUTS: ServerTimeouts = { headersMs: 10_000, requestMs: 30_000, idleMs: 30_000, sendMs: 30_000 };

/** After refusing a request, how long its connection may keep sending before it is cut (ms). */
const LINGER_MS = 2_000;

/** Node's server options for these timeouts (checked often enough to matter). */
export function serverOptions(t: ServerTimeouts): ServerOptions & { handshakeTimeout: number } {
  return {
    headersTimeout: t.headersMs,
    requestTimeout: t.requestMs,
    keepAliveTimeout: t.idleMs,
    // Node checks headersTimeout and requestTimeout on this interval (default 30 s).
    connectionsCheckingInterval: Math.max(50, Math.min(1_000, Math.floor(t.headersMs / 4))),
    handshakeTimeout: t.headersMs,
  };
}

/** Applies the timeouts a server has no constructor option for. */
export function applyTimeouts(server: Server, t: ServerTimeouts): void {
  server.headersTimeout = t.headersMs;
  server.requestTimeout = t.requestMs;
  server.keepAliveTimeout = t.idleMs;
}

/**
 * Reads a request body, at most `limit` bytes: a `content-length` past it is refused
 * before a byte of the body is read, and a body that grows past it (chunked, or longer
 * than announced) is refused as soon as it does; nothing past the limit is kept.
 */
export function readBody(req: IncomingMessage, limit: number): Promise<Buffer | 'too-large'> {
  const declared = Number(req.headers['content-length']);
  if (Number.isFinite(declared) && declared > limit) return Promise.resolve('too-large');
  return new Promise((resolvePromise, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    const onData = (chunk: Buffer) => {
      size += chunk.length;
      if (size > limit) {
        req.off('data', onData);
        chunks.length = 0;
        req.pause();
        resolvePromise('too-large');
        return;
      }
      chunks.push(chunk);
    };
    req.on('data', onData);
    req.on('end', () => resolvePromise(Buffer.concat(chunks)));
    req.on('error', reject);
  });
}

/**
 * Sends a refusal and closes the connection: the rest of the request body (if the client
 * keeps sending) is discarded, not kept, and the connection cut shortly after.
 */
export function refuseAndClose(req: IncomingMessage, res: ServerResponse, status: number, headers: Record<string, string | number>, body: Buffer | string): void {
  res.shouldKeepAlive = false;
  res.writeHead(status, { ...headers, connection: 'close', 'content-length': Buffer.byteLength(body) });
  res.end(body);
  res.once('finish', () => {
    req.resume();
    setTimeout(() => req.socket.destroy(), LINGER_MS).unref();
  });
}

/** Drops the connection of a client that has not taken the whole response within `ms`. */
export function dropSlowReader(res: ServerResponse, ms: number): void {
  if (res.writableFinished) return;
  const timer = setTimeout(() => {
    if (!res.writableFinished) res.socket?.destroy();
  }, ms);
  timer.unref();
  res.once('finish', () => clearTimeout(timer));
  res.once('close', () => clearTimeout(timer));
}

/**
 * The path and query of a request target as the client sent them, neither parsed as a URL nor
 * decoded: `//%zz/x`, `//[/x` or `//a:b/x` are odd paths to route (to a 404 or 400), not errors
 * (a WHATWG URL reads a leading `//` as a host and throws on them).
 */
export function requestTarget(url: string | undefined): { path: string; query: string } {
  const target = url || '/';
  const hash = target.indexOf('#');
  const withoutFragment = hash === -1 ? target : target.slice(0, hash);
  const question = withoutFragment.indexOf('?');
  const path = question === -1 ? withoutFragment : withoutFragment.slice(0, question);
  return { path: path.startsWith('/') ? path : `/${path}`, query: question === -1 ? '' : withoutFragment.slice(question + 1) };
}
