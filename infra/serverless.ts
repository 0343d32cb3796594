import { execFile } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { parse } from 'yaml';
import type { Registration } from '../lib/registration.ts';
import { KlwError } from './functions.ts';
import type { Finding } from './lint.ts';
import { DEFAULT_MEMORY_MB } from './local/runtime.ts';

type Json = Record<string, any>;

/** Reads serverless.yml of a project. */
export function readServerless(root: string): Json {
  const file = join(root, 'serverless.yml');
  if (!existsSync(file)) throw new KlwError(`${file} not found`);
  return parse(readFileSync(file, 'utf8')) as Json;
}

/** The deployed Lambda name of a function: `<service>-<stage>-<name>`, as the Serverless Framework names it. */
export function lambdaName(service: string, stage: string, name: string): string {
  return `${service}-${stage}-${name}`;
}

/**
 * Checks that serverless.yml deploys exactly the functions under functions/, each from its
 * zip, behind `POST /<name>`, with the registration's timeout (Lambda must not outlive the
 * webhook timeout), memory and environment.
 */
export function checkServerless(config: Json, registrations: Registration[]): Finding[] {
  const findings: Finding[] = [];
  const add = (subject: string, message: string) => findings.push({ level: 'error', rule: 'serverless-mismatch', subject, message });
  const functions: Json = config.functions ?? {};
  if (config.frameworkVersion !== '3') add('serverless.yml', `frameworkVersion must be '3', got ${JSON.stringify(config.frameworkVersion)}`);
  if (config.provider?.runtime !== 'nodejs20.x') add('serverless.yml', 'provider.runtime must be nodejs20.x (the bundles target node20)');
  const providerMemory = config.provider?.memorySize ?? 1024;
  for (const reg of registrations) {
    const fn = functions[reg.name];
    if (!fn) {
      add(reg.name, 'functions/ has it but serverless.yml does not deploy it');
      continue;
    }
    if (fn.handler !== 'index.handler') add(reg.name, `handler must be index.handler, got ${JSON.stringify(fn.handler)}`);
    if (fn.package?.artifact !== `dist/functions/${reg.name}.zip`) add(reg.name, `package.artifact must be dist/functions/${reg.name}.zip`);
    const routes = (fn.events ?? []).map((e: Json) => e.httpApi).filter(Boolean);
    if (!routes.some((r: Json) => String(r.method).toUpperCase() === 'POST' && r.path === reg.path)) add(reg.name, `needs an httpApi event POST ${reg.path}`);
    if (fn.timeout !== reg.timeoutSeconds) add(reg.name, `timeout ${fn.timeout} differs from the registration's timeoutSeconds ${reg.timeoutSeconds}`);
    const memory = fn.memorySize ?? providerMemory;
    const wanted = reg.lambda.memorySize ?? DEFAULT_MEMORY_MB;
    if (memory !== wanted) add(reg.name, `memorySize ${memory} differs from the registration's ${wanted}`);
    const env: Json = fn.environment ?? {};
    for (const [key, value] of Object.entries(reg.lambda.environment ?? {})) {
      if (String(env[key]) !== value) add(reg.name, `environment ${key} must be ${JSON.stringify(value)} as the registration says`);
    }
  }
  for (const name of Object.keys(functions)) {
    if (!registrations.some((r) => r.name === name)) add(name, 'serverless.yml deploys it but functions/ has no such function');
  }
  return findings;
}

/** Runs the Serverless Framework CLI of the project with arguments; resolves with its output. */
export function runServerless(root: string, args: string[], env: NodeJS.ProcessEnv = process.env): Promise<{ code: number; stdout: string; stderr: string }> {
  const local = join(root, 'node_modules', '.bin', 'serverless');
  const command = existsSync(local) ? local : 'serverless';
  return new Promise((resolve) => {
    execFile(
      command,
      args,
      { cwd: root, encoding: 'utf8', maxBuffer: 64 * 1024 * 1024, env: { SLS_TELEMETRY_DISABLED: '1', SLS_NOTIFICATIONS_MODE: 'off', ...env } },
      (err, stdout, stderr) => resolve({ code: err ? ((err as { code?: number }).code ?? 1) : 0, stdout, stderr }),
    );
  });
}
