import { randomUUID } from 'node:crypto';
import { mkdirSync, renameSync, writeFileSync } from 'node:fs';
import { createServer as createHttpsServer, type Server } from 'node:https';
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join, resolve } from 'node:path';
import * as esbuild from 'esbuild';
import type { EventSource } from '../../lib/gateway/sources.ts';
import { eventFromHttp } from '../../lib/harness/events.ts';
import { buildAll, bundleOptions } from '../build.ts';
import { loadFunctions, type FunctionEntry } from '../functions.ts';
import { lintDocuments } from '../lint.ts';
import { generateManifests } from '../manifests.ts';
import { renderDocuments } from '../output.ts';
import { ensureLocalCertificates } from './certs.ts';
import { answerByMatchConditions } from './match-conditions.ts';
import type { FunctionPool, Invocation } from './pool.ts';
import { BAD_GATEWAY, httpFromResult, jsonMessage, type HttpResponse } from './results.ts';
import { poolsFor } from './runtime.ts';
import { DEFAULT_TIMEOUTS, dropSlowReader, readBody, refuseAndClose, serverOptions, type ServerTimeouts } from './http.ts';

/** API Gateway's largest request payload (10 MB); bodies past it get 413 before any function runs. */
export const MAX_REQUEST_BYTES = 10 * 1024 * 1024;

/** Options of `klw local start-api`. */
export interface StartApiOptions {
  root: string;
  host?: string;
  port?: number;
  format?: EventSource;
  stateDir?: string;
  watch?: boolean;
  /** Workers per function. */
  concurrency?: number;
  /** Build before starting (default true). */
  build?: boolean;
  /** Where request log lines go; default stderr. */
  log?: (line: string) => void;
  /** Where the functions' own log lines go; default stdout. */
  functionLog?: (line: string) => void;
  /** Client timeouts (default DEFAULT_TIMEOUTS). */
  timeouts?: Partial<ServerTimeouts>;
}

/** A running emulator. */
export interface RunningApi {
  url: string;
  port: number;
  caPath: string;
  manifestsPath: string;
  functions: string[];
  pools: Map<string, FunctionPool>;
  close(): Promise<void>;
}

export { readBody } from './http.ts';

function rawHeaderPairs(req: IncomingMessage): Array<[string, string]> {
  const pairs: Array<[string, string]> = [];
  for (let i = 0; i + 1 < req.rawHeaders.length; i += 2) pairs.push([req.rawHeaders[i]!, req.rawHeaders[i + 1]!]);
  return pairs;
}

/** The HTTP answer to an invocation outcome, as API Gateway gives it. */
export function responseFor(format: EventSource, outcome: Invocation): HttpResponse {
  switch (outcome.kind) {
    case 'result':
      return httpFromResult(format, outcome.result);
    case 'timeout':
      return jsonMessage(504, 'Endpoint request timed out');
    case 'throttled':
      return jsonMessage(429, 'Too Many Requests');
    default:
      return BAD_GATEWAY;
  }
}

function send(res: ServerResponse, response: HttpResponse, requestId: string, sendMs: number): void {
  res.writeHead(response.status, { ...response.headers, 'content-length': response.body.length, 'apigw-requestid': requestId });
  res.end(response.body);
  dropSlowReader(res, sendMs);
}

/** `https://127.0.0.1:3443`, with IPv6 hosts in brackets and wildcard hosts as loopback. */
export function baseUrlFor(host: string, port: number): string {
  const shown = host === '0.0.0.0' ? '127.0.0.1' : host === '::' ? '::1' : host;
  return `https://${shown.includes(':') ? `[${shown}]` : shown}:${port}`;
}

/** Writes build outputs atomically (temp file, then rename), so a worker never imports half a bundle. */
function writeOutputs(files: esbuild.OutputFile[]): void {
  for (const file of files) {
    const temp = `${file.path}.${process.pid}.tmp`;
    writeFileSync(temp, file.contents);
    renameSync(temp, file.path);
  }
}

async function watchFunctions(root: string, functions: FunctionEntry[], pools: Map<string, FunctionPool>, log: (line: string) => void): Promise<esbuild.BuildContext[]> {
  const contexts: esbuild.BuildContext[] = [];
  for (const fn of functions) {
    let first = true;
    const ctx = await esbuild.context({
      ...bundleOptions(root, fn),
      write: false,
      plugins: [
        {
          name: 'klw-swap',
          setup(build) {
            build.onEnd((result) => {
              if (result.errors.length) {
                log(JSON.stringify({ msg: 'rebuild failed; still serving the last good build', function: fn.name, errors: result.errors.map((e) => e.text) }));
                return;
              }
              writeOutputs(result.outputFiles ?? []);
              if (first) {
                first = false;
                return;
              }
              pools.get(fn.name)?.swap();
              log(JSON.stringify({ msg: 'rebuilt', function: fn.name }));
            });
          },
        },
      ],
    });
    await ctx.watch();
    contexts.push(ctx);
  }
  return contexts;
}

/**
 * Starts the local HTTPS API: each function at `POST /<name>`, every request turned into
 * the chosen event format and run in the function's worker pool; writes the CA and the
 * manifests for this URL into the state dir.
 */
export async function startApi(options: StartApiOptions): Promise<RunningApi> {
  const root = resolve(options.root);
  const host = options.host ?? '127.0.0.1';
  const format = options.format ?? 'http';
  const stateDir = resolve(root, options.stateDir ?? '.klw/local');
  const log = options.log ?? ((line: string) => process.stderr.write(line + '\n'));

  const functions = await loadFunctions(root);
  if (options.build !== false) await buildAll(root, functions);
  const certs = await ensureLocalCertificates(stateDir);
  const pools = poolsFor(root, functions.map((f) => f.registration), options.concurrency, options.functionLog);

  const timeouts = { ...DEFAULT_TIMEOUTS, ...options.timeouts };
  const server: Server = createHttpsServer({ key: certs.keyPem, cert: certs.certPem, ...serverOptions(timeouts) }, (req, res) => {
    void (async () => {
      const requestId = randomUUID();
      const url = new URL(req.url ?? '/', 'https://localhost');
      const name = url.pathname.split('/')[1] ?? '';
      const pool = pools.get(name);
      if (!pool) {
        send(res, jsonMessage(404, 'Not Found'), requestId, timeouts.sendMs);
        return;
      }
      const body = await readBody(req, MAX_REQUEST_BYTES);
      if (body === 'too-large') {
        const tooLarge = jsonMessage(413, 'Request Too Large');
        refuseAndClose(req, res, tooLarge.status, { ...(tooLarge.headers as Record<string, string>), 'apigw-requestid': requestId }, tooLarge.body);
        return;
      }
      // A review the function's matchConditions exclude is answered as the API server would, without invoking it.
      const byConditions = answerByMatchConditions(functions.find((f) => f.name === name)?.registration, body, log);
      if (byConditions) return send(res, byConditions, requestId, timeouts.sendMs);
      const event = eventFromHttp(format, {
        method: req.method ?? 'GET',
        path: url.pathname,
        rawQuery: url.search.slice(1),
        headers: rawHeaderPairs(req),
        ...(body.length ? { body } : {}),
        sourceIp: req.socket.remoteAddress ?? '127.0.0.1',
        requestId,
      });
      const outcome = await pool.invoke(event, requestId);
      const response = responseFor(format, outcome);
      send(res, response, requestId, timeouts.sendMs);
      log(
        JSON.stringify({
          msg: 'request',
          function: name,
          method: req.method,
          status: response.status,
          outcome: outcome.kind,
          durationMs: 'durationMs' in outcome ? Math.round(outcome.durationMs * 100) / 100 : 0,
          cold: 'cold' in outcome ? outcome.cold : false,
          ...(outcome.kind === 'error' ? { error: `${outcome.error.errorType}: ${outcome.error.errorMessage}` } : {}),
          ...(outcome.kind === 'crash' ? { error: `${outcome.errorType ?? 'Runtime.ExitError'}: ${outcome.message}` } : {}),
        }),
      );
    })().catch((err: unknown) => {
      if (!res.headersSent) send(res, BAD_GATEWAY, 'error', timeouts.sendMs);
      log(JSON.stringify({ msg: 'emulator fault', error: String(err) }));
    });
  });
  await new Promise<void>((resolvePromise, reject) => {
    server.once('error', reject);
    server.listen(options.port ?? 3443, host, () => resolvePromise());
  });
  const port = (server.address() as AddressInfo).port;
  const url = baseUrlFor(host, port);

  const set = generateManifests(root, functions.map((f) => f.registration), { baseUrl: url, caBundlePem: certs.caPem });
  const errors = lintDocuments(set.documents).filter((f) => f.level === 'error');
  if (errors.length) log(JSON.stringify({ msg: 'manifests have lint errors', errors }));
  const manifestsPath = join(stateDir, 'manifests.yaml');
  writeFileSync(manifestsPath, renderDocuments(set.documents, 'yaml'));

  if (options.watch) for (const fn of functions) mkdirSync(join(root, 'dist', 'functions', fn.name), { recursive: true });
  const contexts = options.watch ? await watchFunctions(root, functions, pools, log) : [];
  return {
    url,
    port,
    caPath: certs.caPath,
    manifestsPath,
    functions: functions.map((f) => f.name),
    pools,
    async close() {
      await Promise.all(contexts.map((c) => c.dispose()));
      server.closeAllConnections();
      await new Promise<void>((r) => server.close(() => r()));
      await Promise.all([...pools.values()].map((p) => p.close()));
    },
  };
}
