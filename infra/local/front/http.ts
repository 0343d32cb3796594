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
export const DEFAULT_TIMEOUTS: ServerTimeouts = {
  headersMs: 10_000,
  requestMs: 30_000,
  idleMs: 30_000,
  sendMs: 30_000,
};

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
 * Default cap on the request-body bytes one emulator server holds at once, across all its
 * connections (64 MiB): room for six full-size start-api requests (10 MB) or ten start-lambda
 * payloads (6 MB) at the same moment, far more than an API server sends a local webhook (reviews
 * are kilobytes), while many clients that each start a large upload and never finish it cannot
 * grow the emulator by more than this (each held byte is copied again into the event a worker
 * gets, so the process grows by a few times the cap at most).
 */
export const DEFAULT_MAX_BUFFERED_BYTES = 64 * 1024 * 1024;

/** A cap on the request-body bytes a server holds at once, across all its connections. */
export class BodyBudget {
  private used = 0;
  private highest = 0;

  /** `limit`: the most bytes held at once. */
  constructor(readonly limit: number) {
    if (!Number.isSafeInteger(limit) || limit < 1) {
      throw new RangeError(`the body budget must be a positive whole number of bytes, not ${limit}`);
    }
  }

  /** Bytes held now. */
  get held(): number {
    return this.used;
  }

  /** The most bytes held at once so far. */
  get peak(): number {
    return this.highest;
  }

  /** Takes `bytes` from the budget; false (and nothing taken) when they do not fit. */
  take(bytes: number): boolean {
    if (this.used + bytes > this.limit) return false;
    this.used += bytes;
    this.highest = Math.max(this.highest, this.used);
    return true;
  }

  /** Gives back bytes taken. */
  give(bytes: number): void {
    this.used -= bytes;
  }
}

/**
 * What reading a body gave: the body; `too-large` past the request limit (or past the whole
 * budget); `busy` when the budget has no room for it now; `gone` when the client went away first.
 */
export type BodyRead = Buffer | 'too-large' | 'busy' | 'gone';

/** Where a body's bytes are counted: the server's budget, held until `until` closes (the response). */
export interface BodyAccounting {
  budget: BodyBudget;
  until?: ServerResponse;
}

/**
 * Reads a request body, at most `limit` bytes: a `content-length` past it is refused
 * before a byte of the body is read, and a body that grows past it (chunked, or longer
 * than announced) is refused as soon as it does; nothing past the limit is kept. With a
 * budget, an announced length is taken from it before reading (a body that does not fit is
 * `busy` at once, one larger than the whole budget `too-large`), a chunked body chunk by
 * chunk; the bytes go back when the read fails or, once read, when `until` closes.
 */
export function readBody(req: IncomingMessage, limit: number, accounting?: BodyAccounting): Promise<BodyRead> {
  const header = req.headers['content-length'];
  const declared = header === undefined ? NaN : Number(header);
  if (Number.isFinite(declared) && declared > limit) return Promise.resolve('too-large');
  const budget = accounting?.budget;
  let held = 0;
  if (budget && Number.isFinite(declared)) {
    if (declared > budget.limit) return Promise.resolve('too-large');
    if (!budget.take(declared)) return Promise.resolve('busy');
    held = declared;
  }
  const release = () => {
    budget?.give(held);
    held = 0;
  };
  return new Promise((resolvePromise) => {
    const chunks: Buffer[] = [];
    let size = 0;
    let settled = false;
    const settle = (result: BodyRead) => {
      if (settled) return;
      settled = true;
      req.off('data', onData);
      req.off('end', onEnd);
      req.off('error', onGone);
      req.off('close', onGone);
      if (!Buffer.isBuffer(result)) {
        chunks.length = 0;
        req.pause();
        release();
      } else if (accounting?.until && !accounting.until.destroyed && !accounting.until.writableFinished) {
        accounting.until.once('close', release);
      } else {
        release();
      }
      resolvePromise(result);
    };
    const onData = (chunk: Buffer) => {
      size += chunk.length;
      if (size > limit) return settle('too-large');
      if (budget && size > held) {
        if (!budget.take(size - held)) return settle('busy');
        held = size;
      }
      chunks.push(chunk);
    };
    const onEnd = () => settle(Buffer.concat(chunks, size));
    const onGone = () => settle('gone');
    req.on('data', onData);
    req.once('end', onEnd);
    req.once('error', onGone);
    req.once('close', onGone);
  });
}

/** How much of a refused request's body is read and thrown away before its connection is closed. */
export interface DrainBounds {
  /** Most body bytes read after the refusal. */
  bytes: number;
  /** Most time spent reading them (ms). */
  ms: number;
}

/**
 * Sends a refusal and closes the connection. The whole answer is written at once, but the
 * response ends (and Node closes the socket) only after the rest of the request body has been
 * read and discarded: a socket closed with unread data in it sends a reset, which can reach the
 * client before it has read the answer, so it would see EPIPE or ECONNRESET instead of this
 * status. The draining is bounded by `drain` (bytes and time); past either bound the connection
 * is closed anyway. Nothing drained is kept.
 */
export function refuseAndClose(
  req: IncomingMessage,
  res: ServerResponse,
  status: number,
  headers: Record<string, string | number>,
  body: Buffer | string,
  drain: DrainBounds,
): void {
  res.shouldKeepAlive = false;
  res.writeHead(status, { ...headers, connection: 'close', 'content-length': Buffer.byteLength(body) });
  res.write(body);
  if (req.complete || req.destroyed) {
    res.end();
    return;
  }
  let drained = 0;
  const done = () => {
    clearTimeout(timer);
    req.off('data', onData);
    req.off('end', done);
    req.off('close', done);
    req.off('error', done);
    if (!res.writableEnded) res.end();
  };
  const onData = (chunk: Buffer) => {
    drained += chunk.length;
    if (drained > drain.bytes) done();
  };
  const timer = setTimeout(done, drain.ms);
  timer.unref();
  req.on('data', onData);
  req.once('end', done);
  req.once('close', done);
  req.once('error', done);
  req.resume();
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
  return {
    path: path.startsWith('/') ? path : `/${path}`,
    query: question === -1 ? '' : withoutFragment.slice(question + 1),
  };
}
