/**
 * `klw audit -o openreports`: the audit as OpenReports objects (openreports.io/v1alpha1), the
 * format policy engines report in. One report per audited object, its `scope` the object: a
 * `Report` in the object's namespace, a `ClusterReport` for a cluster-scoped object; one result
 * per function or policy that saw it, with the summary of their results.
 */
import { createHash } from 'node:crypto';
import type { AuditReport, AuditResult } from './audit.ts';

/** The API version of Report and ClusterReport. */
export const OPENREPORTS_API_VERSION = 'openreports.io/v1alpha1';
/** The `source` of the reports: the engine that made them. */
export const OPENREPORTS_SOURCE = 'kube-lambda-webhooks';
/** The label that marks the reports this tool writes (`kubectl delete reports -l ...` clears them). */
export const MANAGED_BY = { 'app.kubernetes.io/managed-by': OPENREPORTS_SOURCE };

/** A result of a report: pass, fail, warn, error or skip. */
export type OpenReportResult = 'pass' | 'fail' | 'warn' | 'error' | 'skip';

/**
 * What an audit outcome is in a report: an object the API server would refuse is `fail`; one
 * it admits with a warning, an audit annotation, or refuses only once the function is in `Deny`
 * enforcement, and one a mutation would change, is `warn`; a function or policy that fails is
 * `error`; `skipped` (matchConditions) is `skip`.
 */
export function openReportResult(result: AuditResult): OpenReportResult {
  switch (result.result) {
    case 'allowed':
      return 'pass';
    case 'skipped':
      return 'skip';
    case 'error':
      return 'error';
    case 'denied':
      return result.enforcement === 'Deny' ? 'fail' : 'warn';
    default:
      return 'warn';
  }
}

/** The message of a result: the denial, the warnings, or what the patch changes. */
function messageOf(result: AuditResult): string | undefined {
  const parts = [
    result.message,
    result.result !== 'warned' && result.warnings?.length ? `warnings: ${result.warnings.join(' | ')}` : undefined,
    result.patch?.length ? `would change: ${result.patch.map((op) => `${op.op} ${op.path}`).join(', ')}` : undefined,
  ].filter(Boolean);
  return parts.length ? parts.join('; ') : undefined;
}

/** Extra facts of a result, as the strings `properties` holds. */
function propertiesOf(result: AuditResult, cluster: string | undefined): Record<string, string> {
  return {
    ...(cluster ? { cluster } : {}),
    operation: result.operation,
    enforcement: result.enforcement,
    ...(result.validationActions ? { validationActions: result.validationActions.join(',') } : {}),
    ...(result.patch?.length ? { patch: JSON.stringify(result.patch) } : {}),
  };
}

/** A name for the report of an object: `klw-<uid>`, else a digest of what names the object (DNS-1123, at most 63). */
function reportName(result: AuditResult): string {
  if (result.uid && /^[a-z0-9-]{1,59}$/.test(result.uid)) return `klw-${result.uid}`;
  const id = `${result.apiVersion}/${result.kind}/${result.namespace ?? ''}/${result.name}`;
  return `klw-${createHash('sha256').update(id).digest('hex').slice(0, 40)}`;
}

/** Options of {@link openReports}. */
export interface OpenReportsOptions {
  /** When the results were found (their `timestamp`). */
  now: Date;
  /** The cluster's name (clusters.yaml), recorded in each result's properties. */
  cluster?: string;
}

/**
 * The Report and ClusterReport objects of an audit, one per object, in the order the objects
 * were first audited. The report must keep allowed results (`keepAllowed`) to count passes.
 */
export function openReports(report: AuditReport, options: OpenReportsOptions): Array<Record<string, unknown>> {
  const seconds = Math.floor(options.now.getTime() / 1000);
  const byObject = new Map<string, AuditResult[]>();
  for (const result of report.results) {
    const key = `${result.apiVersion}\0${result.kind}\0${result.namespace ?? ''}\0${result.name}`;
    byObject.set(key, [...(byObject.get(key) ?? []), result]);
  }
  const reports: Array<Record<string, unknown>> = [];
  for (const results of byObject.values()) {
    const first = results[0]!;
    const summary = { pass: 0, fail: 0, warn: 0, error: 0, skip: 0 };
    const entries = results.map((result) => {
      const outcome = openReportResult(result);
      summary[outcome]++;
      const message = messageOf(result);
      return {
        source: OPENREPORTS_SOURCE,
        policy: result.function,
        rule: result.webhook,
        result: outcome,
        scored: true,
        timestamp: { seconds, nanos: 0 },
        ...(message ? { message } : {}),
        properties: propertiesOf(result, options.cluster),
      };
    });
    reports.push({
      apiVersion: OPENREPORTS_API_VERSION,
      kind: first.namespace ? 'Report' : 'ClusterReport',
      metadata: {
        name: reportName(first),
        ...(first.namespace ? { namespace: first.namespace } : {}),
        labels: { ...MANAGED_BY },
      },
      source: OPENREPORTS_SOURCE,
      scope: {
        apiVersion: first.apiVersion,
        kind: first.kind,
        ...(first.namespace ? { namespace: first.namespace } : {}),
        name: first.name,
        ...(first.uid ? { uid: first.uid } : {}),
      },
      summary,
      results: entries,
    });
  }
  return reports;
}
