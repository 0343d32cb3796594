import { execFile } from 'node:child_process';
import { existsSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { parse } from 'yaml';
import type { Registration } from '../../lib/internal.ts';
import { KlwError } from '../errors.ts';
import { readRegularFile } from '../files.ts';
import type { Finding } from '../lint/finding.ts';
import { checkRuntime, DEFAULT_RUNTIME } from '../runtimes.ts';
import { PLUGIN_NAME, routePath } from './routes.ts';
import { isRecord, valueAt } from '../json.ts';

/** serverless.yml as read: a mapping whose members are checked where they are used. */
export type ServerlessConfig = Record<string, unknown>;

/** Reads serverless.yml of a project; a file that is not a mapping is an error naming it. */
export function readServerless(root: string): ServerlessConfig {
  const file = join(root, 'serverless.yml');
  if (!existsSync(file)) throw new KlwError(`${file} not found`);
  const config: unknown = parse(readRegularFile(file));
  if (!isRecord(config))
    throw new KlwError(`${file} is not a mapping: write service:, provider: and plugins: at its top level`);
  return config;
}

/** The deployed Lambda name of a function: `<service>-<stage>-<name>`, as the Serverless Framework names it. */
export function lambdaName(service: string, stage: string, name: string): string {
  return `${service}-${stage}-${name}`;
}

/** True when serverless.yml loads this package's plugin (by package name, or this repository's shim). */
export function loadsPlugin(config: unknown): boolean {
  const listed = valueAt(config, 'plugins');
  const modules = valueAt(listed, 'modules');
  const plugins: unknown[] = Array.isArray(listed) ? listed : Array.isArray(modules) ? modules : [];
  return plugins.some((p) => p === PLUGIN_NAME || (typeof p === 'string' && p.endsWith('/serverless-plugin.mjs')));
}

/** Edits (insertions, deletions, substitutions, swaps of neighbours) between two names. */
export function editDistance(a: string, b: string): number {
  const d: number[][] = Array.from({ length: a.length + 1 }, (_, i) =>
    Array.from({ length: b.length + 1 }, (_, j) => (i === 0 ? j : j === 0 ? i : 0)),
  );
  for (let i = 1; i <= a.length; i++) {
    for (let j = 1; j <= b.length; j++) {
      const cost = a[i - 1] === b[j - 1] ? 0 : 1;
      d[i]![j] = Math.min(d[i - 1]![j]! + 1, d[i]![j - 1]! + 1, d[i - 1]![j - 1]! + cost);
      if (i > 1 && j > 1 && a[i - 1] === b[j - 2] && a[i - 2] === b[j - 1])
        d[i]![j] = Math.min(d[i]![j]!, d[i - 2]![j - 2]! + 1);
    }
  }
  return d[a.length]![b.length]!;
}

/** The name among `names` closest to `name`, when it is close enough to be a slip of the keyboard. */
export function nearestName(name: string, names: string[]): string | undefined {
  let best: { name: string; distance: number } | undefined;
  for (const candidate of names) {
    const distance = editDistance(name, candidate);
    if (!best || distance < best.distance) best = { name: candidate, distance };
  }
  // Two edits, and never most of the name: `by-hnad` is `by-hand`, `api` is not `app-b`.
  return best && best.distance <= Math.min(2, Math.floor(Math.max(name.length, best.name.length) / 3))
    ? best.name
    : undefined;
}

/**
 * Checks serverless.yml against the registrations: it loads the plugin (which deploys every
 * function in functions/), no `frameworkVersion` osls refuses, a runtime AWS Lambda still
 * lets functions be created with on `now` (a deprecated one is a warning), every entry of
 * `functions:` is either a function of functions/ or a function of its own (with a `handler`
 * or an `image`; a misspelt override names the function meant), and every function
 * written out under `functions:` (an override of the generated one) keeps the rules: a Lambda
 * timeout no longer than the webhook's, the route the manifests point at, the registration's
 * environment, reserved concurrency that neither disables the function nor is below its
 * provisioned concurrency.
 */
export function checkServerless(config: ServerlessConfig, registrations: Registration[], now = new Date()): Finding[] {
  const findings: Finding[] = [];
  const add = (subject: string, message: string, level: Finding['level'] = 'error', rule = 'serverless-override') =>
    findings.push({ level, rule, subject, message });
  // As Object.entries reads it: a list or a string would be reported entry by entry.
  const functions: Record<string, unknown> = Object(config.functions ?? {});
  const version = config.frameworkVersion;
  if (version !== undefined && /^\s*[\^~=v]?\s*[0-3](\.|\s*$)/.test(String(version))) {
    add(
      'serverless.yml',
      `frameworkVersion ${JSON.stringify(version)} is refused by osls 4 (the maintained Serverless Framework v3 line); remove it`,
      'error',
      'serverless-framework',
    );
  }
  const runtime = valueAt(config.provider, 'runtime') ?? DEFAULT_RUNTIME;
  if (!(typeof runtime === 'string' && runtime.includes('${')))
    findings.push(...checkRuntime(runtime, 'serverless.yml provider.runtime', now));
  if (!loadsPlugin(config)) {
    const missing = registrations.filter((r) => !functions[r.name]);
    if (missing.length)
      add(
        'serverless.yml',
        `plugins must list ${PLUGIN_NAME}, or ${missing.map((r) => r.name).join(', ')} ${missing.length > 1 ? 'are' : 'is'} not deployed`,
        'error',
        'serverless-plugin',
      );
  }
  const names = registrations.map((r) => r.name);
  for (const [key, fn] of Object.entries(functions)) {
    if (names.includes(key) || (isRecord(fn) && (fn.handler !== undefined || fn.image !== undefined))) continue;
    const near = nearestName(key, names);
    add(
      `functions.${key}`,
      `${key} is not a function in functions/${near ? ` (did you mean ${near}?)` : names.length ? ` (those are ${names.join(', ')})` : ''} and has no handler or image of its own: serverless package fails with: Either "handler" or "image" property needs to be set`,
      'error',
      'serverless-function',
    );
  }
  for (const reg of registrations) {
    const fn = functions[reg.name];
    if (!isRecord(fn)) continue;
    if (fn.runtime !== undefined) findings.push(...checkRuntime(fn.runtime, `${reg.name} runtime`, now));
    if (fn.timeout !== undefined && !(Number(fn.timeout) <= reg.timeoutSeconds)) {
      add(
        reg.name,
        `timeout ${fn.timeout} is longer than the webhook's timeoutSeconds ${reg.timeoutSeconds}: the API server gives up first, and the function runs on for nothing`,
      );
    }
    if (fn.events !== undefined) {
      const events: unknown[] = Array.isArray(fn.events) ? fn.events : [];
      const routes = events.map((e) => valueAt(e, 'httpApi')).filter((h) => h && typeof h === 'object');
      const path = routePath(reg);
      if (!routes.some((r) => String(valueAt(r, 'method')).toUpperCase() === 'POST' && valueAt(r, 'path') === path))
        add(reg.name, `events must keep the route POST ${path}: the manifests point the API server at it`);
    }
    for (const [key, value] of Object.entries(reg.lambda.environment ?? {})) {
      const environment = fn.environment;
      if (isRecord(environment) && Object.hasOwn(environment, key) && String(environment[key]) !== value)
        add(
          reg.name,
          `environment ${key} overrides the registration's ${JSON.stringify(value)} with ${JSON.stringify(environment[key])}`,
          'warning',
        );
    }
    if (fn.reservedConcurrency !== undefined) {
      const reserved = Number(fn.reservedConcurrency);
      const provisioned = Number(fn.provisionedConcurrency ?? reg.lambda.provisionedConcurrency ?? 0);
      if (reserved === 0) add(reg.name, 'reservedConcurrency 0 disables the function: every review fails');
      else if (reserved < provisioned)
        add(
          reg.name,
          `reservedConcurrency ${reserved} is below provisionedConcurrency ${provisioned}; Lambda refuses it`,
        );
    }
  }
  return findings;
}

/**
 * The Serverless Framework CLI for a project: osls's own bin (`node_modules/.bin/osls`) of the
 * project or of a folder above it, else its `serverless` bin (which a plugin's peer
 * dependency on serverless v3 may have taken), else `serverless` from PATH.
 */
export function serverlessBin(root: string): string {
  for (const name of ['osls', 'serverless']) {
    for (let dir = resolve(root); ; dir = dirname(dir)) {
      const bin = join(dir, 'node_modules', '.bin', name);
      if (existsSync(bin)) return bin;
      if (dirname(dir) === dir) break;
    }
  }
  return 'serverless';
}

/** Runs the Serverless Framework CLI of the project with arguments; resolves with its output. */
export function runServerless(
  root: string,
  args: string[],
  env: NodeJS.ProcessEnv = process.env,
): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((done) => {
    execFile(
      serverlessBin(root),
      args,
      {
        cwd: root,
        encoding: 'utf8',
        maxBuffer: 64 * 1024 * 1024,
        env: { SLS_TELEMETRY_DISABLED: '1', SLS_NOTIFICATIONS_MODE: 'off', ...env },
      },
      (err, stdout, stderr) => done({ code: err ? ((err as { code?: number }).code ?? 1) : 0, stdout, stderr }),
    );
  });
}
