import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { parse } from 'yaml';
import { readRegularFile } from './files.ts';
import type { Finding } from './lint/finding.ts';

/** The Lambda runtime functions are deployed on unless the project picks another. */
export const DEFAULT_RUNTIME = 'nodejs24.x';

/** Lambda memory when a registration names none (MB); Lambda gives CPU in proportion to it. */
export const DEFAULT_MEMORY_MB = 256;

/** Lambda Node.js runtimes a project may choose: those whose creation AWS does not block yet. */
export const SUPPORTED_RUNTIMES = ['nodejs24.x', 'nodejs22.x'] as const;

/** AWS Lambda's lifecycle dates of a managed runtime (UTC days). */
export interface RuntimeSchedule {
  /** No more security patches; functions keep running and can still be created for a while. */
  deprecated: string;
  /** CreateFunction with this runtime is refused: a first deploy fails. */
  blockCreate: string;
  /** UpdateFunctionCode/Configuration is refused: every later deploy fails. */
  blockUpdate: string;
}

/**
 * The Node.js runtimes' schedule from the AWS Lambda Developer Guide ("Lambda runtimes",
 * "Building Lambda functions with Node.js"); nodejs18.x after AWS moved its update block to
 * 9 March 2026. Update this table when AWS publishes new runtimes or moves a date.
 */
export const RUNTIME_SCHEDULE: Record<string, RuntimeSchedule> = {
  'nodejs18.x': { deprecated: '2025-09-01', blockCreate: '2026-03-09', blockUpdate: '2026-03-09' },
  'nodejs20.x': { deprecated: '2026-04-30', blockCreate: '2026-08-31', blockUpdate: '2026-09-30' },
  'nodejs22.x': { deprecated: '2027-04-30', blockCreate: '2027-06-01', blockUpdate: '2027-07-01' },
  'nodejs24.x': { deprecated: '2028-04-30', blockCreate: '2028-06-01', blockUpdate: '2028-07-01' },
};

/** The esbuild target for a Lambda runtime: `nodejs24.x` → `node24`. */
export function esbuildTarget(runtime: string): string {
  const major = /^nodejs(\d+)\.x$/.exec(runtime)?.[1];
  if (!major)
    throw new TypeError(`${JSON.stringify(runtime)} is not a Lambda Node.js runtime (nodejs24.x, nodejs22.x)`);
  return `node${major}`;
}

/**
 * The runtime a project deploys on: `provider.runtime` of its serverless.yml when that is a
 * Node.js runtime written out (not a variable), else the default.
 */
export function projectRuntime(root: string): string {
  const file = join(root, 'serverless.yml');
  if (!existsSync(file)) return DEFAULT_RUNTIME;
  let runtime: unknown;
  try {
    runtime = (parse(readRegularFile(file)) as { provider?: { runtime?: unknown } } | null)?.provider?.runtime;
  } catch {
    return DEFAULT_RUNTIME;
  }
  return typeof runtime === 'string' && /^nodejs\d+\.x$/.test(runtime) ? runtime : DEFAULT_RUNTIME;
}

/** `2026-11-22` of a date, in UTC. */
function day(date: Date): string {
  return date.toISOString().slice(0, 10);
}

/**
 * What AWS Lambda's schedule says of deploying a runtime on a day (`now`, injectable for
 * tests): an error once creating functions with it is blocked (a first deploy would be
 * refused), a warning once it is deprecated, nothing while it is supported. A runtime that
 * is not a known Node.js runtime is an error.
 */
export function checkRuntime(runtime: unknown, subject: string, now: Date = new Date()): Finding[] {
  const at = (level: Finding['level'], message: string): Finding[] => [
    { level, rule: 'lambda-runtime', subject, message },
  ];
  if (typeof runtime !== 'string')
    return at(
      'error',
      `runtime must be a Lambda Node.js runtime (${SUPPORTED_RUNTIMES.join(', ')}), got ${JSON.stringify(runtime)}`,
    );
  const schedule = RUNTIME_SCHEDULE[runtime];
  if (!schedule)
    return at(
      'error',
      `${runtime} is not a Lambda Node.js runtime this toolkit knows; use ${SUPPORTED_RUNTIMES.join(' or ')}`,
    );
  const today = day(now);
  if (today >= schedule.blockUpdate)
    return at(
      'error',
      `AWS Lambda blocks creating and updating ${runtime} functions since ${schedule.blockUpdate}: deploys fail; use ${DEFAULT_RUNTIME}`,
    );
  if (today >= schedule.blockCreate)
    return at(
      'error',
      `AWS Lambda blocks creating ${runtime} functions since ${schedule.blockCreate} (updates until ${schedule.blockUpdate}): a first deploy fails; use ${DEFAULT_RUNTIME}`,
    );
  if (today >= schedule.deprecated)
    return at(
      'warning',
      `${runtime} is deprecated since ${schedule.deprecated} (no security patches); AWS Lambda blocks creating functions with it from ${schedule.blockCreate}; move to ${DEFAULT_RUNTIME}`,
    );
  return [];
}
