/**
 * `klw audit --context a --context b` and `klw audit --all-clusters`: one audit over several
 * clusters, one report with each cluster's counts, one exit code over all. A cluster that cannot
 * be reached or listed is reported and makes the audit incomplete (exit 2), as for one cluster.
 */
import type { AdmissionWebhook } from '../../lib/admission/webhook.ts';
import type { Enforcement } from '../../lib/registration.ts';
import {
  AUDIT_INCOMPLETE,
  deniedLine,
  KubeClient,
  kubeLimitsFrom,
  loadConnection,
  ProgressBar,
  runAudit,
  summaryLine,
  whoAmI,
  type AuditOutcome,
  type AuditReport,
  type LimitOptions,
} from '../audit/index.ts';
import { KlwError } from '../errors.ts';
import { loadFunctions, loadWebhooks } from '../functions.ts';

import { toKubeYaml } from '../output.ts';
import { FLEET_FILE, loadFleet, type Fleet } from './file.ts';

/** One cluster to audit: its name in the report, its kubeconfig context and its enforcement per function. */
export interface FleetAuditTarget {
  cluster: string;
  context: string;
  enforcement: Record<string, Enforcement>;
}

/** One cluster's part of the report: its audit, or why it could not be audited. */
export interface ClusterAudit {
  cluster: string;
  context: string;
  /** The API server's URL, once the context was read. */
  server?: string;
  report?: AuditReport;
  /** Why the cluster was not audited (unreachable, no such context, no credentials). */
  error?: string;
}

/** Everything an audit of several clusters found. */
export interface FleetAuditReport {
  clusters: ClusterAudit[];
  /** Objects run through a webhook over all clusters, by outcome. */
  summary: Record<AuditOutcome, number>;
}

/**
 * The clusters to audit. With `all`, every cluster of the fleet file, through its `context` (or
 * the context of its name); else one per `--context`, named after the fleet cluster with that
 * context (or that name) when there is one, else after the context.
 */
export function fleetAuditTargets(
  contexts: readonly string[],
  all: boolean,
  fleet: Fleet | undefined,
): FleetAuditTarget[] {
  if (all && contexts.length) throw new KlwError('give --context or --all-clusters, not both');
  if (all) {
    if (!fleet) throw new KlwError(`--all-clusters needs the fleet file ${FLEET_FILE} at the project root`);
    return fleet.clusters.map((c) => ({ cluster: c.name, context: c.context ?? c.name, enforcement: c.enforcement }));
  }
  const targets: FleetAuditTarget[] = [];
  for (const context of contexts) {
    if (targets.some((t) => t.context === context)) throw new KlwError(`--context ${context} is given twice`);
    const known =
      fleet?.clusters.find((c) => c.context === context) ??
      fleet?.clusters.find((c) => c.context === undefined && c.name === context);
    const cluster = known?.name ?? context;
    if (targets.some((t) => t.cluster === cluster))
      throw new KlwError(`--context ${context} is cluster ${cluster} of ${FLEET_FILE} again`);
    targets.push({ cluster, context, enforcement: known?.enforcement ?? {} });
  }
  return targets;
}

const OUTCOMES: AuditOutcome[] = ['denied', 'warned', 'audited', 'patched', 'allowed', 'skipped', 'error'];

/**
 * Audits each target in turn with `audit`; a cluster whose audit throws is recorded with the
 * error and the others still run. Results carry the cluster's enforcement of their function.
 */
export async function runFleetAudit(
  targets: readonly FleetAuditTarget[],
  audit: (target: FleetAuditTarget, server: (url: string) => void) => Promise<AuditReport>,
): Promise<FleetAuditReport> {
  const summary = Object.fromEntries(OUTCOMES.map((o) => [o, 0])) as Record<AuditOutcome, number>;
  const clusters: ClusterAudit[] = [];
  for (const target of targets) {
    const entry: ClusterAudit = { cluster: target.cluster, context: target.context };
    clusters.push(entry);
    try {
      const report = await audit(target, (url) => {
        entry.server = url;
      });
      for (const result of report.results)
        result.enforcement = target.enforcement[result.function] ?? result.enforcement;
      for (const outcome of OUTCOMES) summary[outcome] += report.summary[outcome];
      entry.report = report;
    } catch (err) {
      entry.error = err instanceof Error ? err.message : String(err);
    }
  }
  return { clusters, summary };
}

/** Exit code over all clusters: 2 when one was not audited or (without `allowPartial`) left objects unchecked, else 1 when any object would be denied, else 0. */
export function fleetExitCode(report: FleetAuditReport, allowPartial: boolean): 0 | 1 | 2 {
  if (report.clusters.some((c) => c.error || (!allowPartial && c.report!.problems.length))) return 2;
  return report.clusters.some((c) => c.report!.results.some((r) => r.rejected)) ? 1 : 0;
}

/** The report as one table (a CLUSTER column first), JSON or YAML. */
export function renderFleetAudit(report: FleetAuditReport, format: 'table' | 'json' | 'yaml'): string {
  if (format === 'json') return `${JSON.stringify(report, null, 2)}\n`;
  if (format === 'yaml') return toKubeYaml(report);
  const rows = report.clusters.flatMap((c) =>
    (c.report?.results ?? []).map((r) => [
      c.cluster,
      r.result.toUpperCase(),
      r.function,
      r.validationActions?.join(',') ?? r.enforcement,
      r.resource,
      r.namespace ? `${r.namespace}/${r.name}` : r.name,
      [r.message, r.warnings?.length ? `warnings: ${r.warnings.join(' | ')}` : undefined].filter(Boolean).join('; '),
    ]),
  );
  if (!rows.length) return '';
  const table = [['CLUSTER', 'RESULT', 'FUNCTION', 'ENFORCEMENT', 'RESOURCE', 'OBJECT', 'MESSAGE'], ...rows];
  const widths = table[0]!.slice(0, -1).map((_, i) => Math.max(...table.map((row) => row[i]!.length)));
  const line = (row: string[]) =>
    row
      .map((cell, i) => (i < widths.length ? cell.padEnd(widths[i]!) : cell))
      .join('  ')
      .trimEnd();
  return `${table.map(line).join('\n')}\n`;
}

/** One line per cluster (its counts, or why it was not audited), then the line over all. */
export function fleetSummaryLines(report: FleetAuditReport, allowPartial: boolean): string[] {
  const lines: string[] = [];
  for (const c of report.clusters) {
    if (c.error) {
      lines.push(`cluster ${c.cluster} (context ${c.context}): not audited: ${c.error}`);
      continue;
    }
    const r = c.report!;
    for (const problem of r.problems)
      lines.push(`cluster ${c.cluster}: ${allowPartial ? 'warning' : 'incomplete'}: ${problem}`);
    for (const note of r.notes ?? []) lines.push(`cluster ${c.cluster}: note: ${note}`);
    const denied = deniedLine(r);
    lines.push(`cluster ${c.cluster}: ${summaryLine(r)}${denied ? `; ${denied}` : ''}`);
  }
  // The counts over all clusters, worded as one cluster's are (summaryLine reads only the summary).
  const total: AuditReport = { auditor: { username: '' }, summary: report.summary, results: [], problems: [] };
  const failed = report.clusters.filter((c) => c.error).length;
  const counts = summaryLine(total).replace(/^audit:/, `audit of ${report.clusters.length} clusters:`);
  lines.push(`${counts}${failed ? `; ${failed} cluster${failed === 1 ? '' : 's'} not audited` : ''}`);
  return lines;
}

/** The options of `klw audit` the fleet audit reads. */
export interface FleetAuditOptions extends LimitOptions {
  kubeconfig?: string;
  context: string[];
  allClusters?: boolean;
  output: 'table' | 'json' | 'yaml';
  pageSize: number;
  as?: string;
  asGroup?: string[];
  allowPartial?: boolean;
  progress: boolean;
}

/** Where the fleet audit writes: progress and counts (stderr), the report (stdout). */
export interface FleetAuditIo {
  say: (line: string) => void;
  writeOutput: (text: string) => void;
}

/**
 * `klw audit` over several clusters: audits each target through its context, writes one report
 * and the counts per cluster, and throws the KlwError of the exit code over all (none for 0).
 * Whatever keeps the audit from starting (options, functions, the fleet file) exits 2.
 */
export async function fleetAuditAction(
  root: string,
  names: string[],
  options: FleetAuditOptions,
  io: FleetAuditIo,
): Promise<void> {
  const { say } = io;
  let report: FleetAuditReport;
  try {
    if (!Number.isInteger(options.pageSize) || options.pageSize < 1)
      throw new KlwError('--page-size must be a whole number of at least 1');
    const limits = kubeLimitsFrom(options);
    const loaded = await loadWebhooks(root, names);
    const webhooks = loaded.filter((w): w is AdmissionWebhook => w.registration.type !== 'conversion');
    if (!webhooks.length) throw new KlwError('no admission functions to audit');
    const everyFunction = names.length ? (await loadFunctions(root)).map((f) => f.registration) : undefined;
    const fleet = loadFleet(root, everyFunction ?? loaded.map((w) => w.registration));
    const targets = fleetAuditTargets(options.context, !!options.allClusters, fleet);
    const as = options.as
      ? { username: options.as, groups: [...(options.asGroup ?? []), 'system:authenticated'] }
      : undefined;
    say(`auditing ${webhooks.length} function${webhooks.length === 1 ? '' : 's'} in ${targets.length} clusters`);
    report = await runFleetAudit(targets, async (target, server) => {
      const connection = await loadConnection({
        ...(options.kubeconfig ? { kubeconfig: options.kubeconfig } : {}),
        context: target.context,
        execTimeoutMs: limits.execMs,
      });
      server(connection.server);
      const client = new KubeClient(connection, limits);
      const auditor = as ?? (await whoAmI(client)) ?? { username: 'klw-audit', groups: ['system:authenticated'] };
      say(`auditing cluster ${target.cluster} (${connection.server}) as ${auditor.username}`);
      const bar = new ProgressBar(options.progress ? process.stderr : { isTTY: false, write: () => true });
      return runAudit({
        client,
        webhooks,
        auditor,
        accessReviews: as ? 'subject' : 'self',
        enforcement: target.enforcement,
        pageSize: options.pageSize,
        onProgress: (p) => bar.update(p),
      }).finally(() => bar.done());
    });
  } catch (err) {
    throw new KlwError(err instanceof Error ? err.message : String(err), { exitCode: AUDIT_INCOMPLETE, cause: err });
  }
  io.writeOutput(renderFleetAudit(report, options.output));
  const allowPartial = !!options.allowPartial;
  for (const line of fleetSummaryLines(report, allowPartial)) say(line);
  const exitCode = fleetExitCode(report, allowPartial);
  if (exitCode === AUDIT_INCOMPLETE) {
    const missing = report.clusters.filter((c) => c.error || (!allowPartial && c.report!.problems.length));
    throw new KlwError(
      `audit incomplete: ${missing.map((c) => c.cluster).join(', ')} not fully audited` +
        `${allowPartial ? '' : '; --allow-partial accepts clusters audited in part'}`,
      { exitCode },
    );
  }
  if (exitCode === 1) {
    const rejected = report.clusters.filter((c) => c.report!.results.some((r) => r.rejected));
    throw new KlwError(`objects would be denied in ${rejected.map((c) => c.cluster).join(', ')}`);
  }
}
