// What klw audit prints: the report as a table, JSON or YAML, its summary lines, and the progress bar.
import type { Operation as PatchOperation } from 'fast-json-patch';
import { toKubeYaml } from '../output.ts';
import type { AuditReport, AuditProgress } from './audit.ts';

/** One line per patch operation: `add /metadata/labels/team`. */
function describePatch(patch: PatchOperation[]): string {
  return patch.map((op) => `${op.op} ${op.path}`).join(', ');
}

/** Exit code of `klw audit` when the audit did not run or could not check everything (1 means something would be denied). */
export const AUDIT_INCOMPLETE = 2;

/** The report as a table (non-allowed objects), JSON or YAML. */
export function renderAudit(report: AuditReport, format: 'table' | 'json' | 'yaml'): string {
  if (format === 'json') return `${JSON.stringify(report, null, 2)}\n`;
  if (format === 'yaml') return toKubeYaml(report);
  if (!report.results.length) return '';
  const rows = [
    ['RESULT', 'FUNCTION', 'ENFORCEMENT', 'RESOURCE', 'OBJECT', 'MESSAGE'],
    ...report.results.map((r) => [
      r.result.toUpperCase(),
      r.function,
      r.validationActions?.join(',') ?? r.enforcement,
      r.resource,
      r.namespace ? `${r.namespace}/${r.name}` : r.name,
      [
        r.message,
        r.warnings?.length ? `warnings: ${r.warnings.join(' | ')}` : undefined,
        r.patch ? `patch: ${describePatch(r.patch)}` : undefined,
      ]
        .filter(Boolean)
        .join('; '),
    ]),
  ];
  const widths = rows[0]!.slice(0, -1).map((_, i) => Math.max(...rows.map((row) => row[i]!.length)));
  return `${rows
    .map((row) =>
      row
        .map((cell, i) => (i < widths.length ? cell.padEnd(widths[i]!) : cell))
        .join('  ')
        .trimEnd(),
    )
    .join('\n')}\n`;
}

/** `audit: 12 objects: 2 denied, 1 warned, 1 patched, 8 allowed, 0 skipped, 0 errors`. */
export function summaryLine(report: AuditReport): string {
  const s = report.summary;
  const total = Object.values(s).reduce((a, b) => a + b, 0);
  // Only policies whose actions merely audit give `audited`: counted when there are any.
  const audited = s.audited ? `, ${s.audited} audited` : '';
  return `audit: ${total} object${total === 1 ? '' : 's'}: ${s.denied} denied, ${s.warned} warned${audited}, ${s.patched} patched, ${s.allowed} allowed, ${s.skipped} skipped, ${s.error} error${s.error === 1 ? '' : 's'}`;
}

/**
 * `3 objects would be denied (2 by functions in Warn or Audit enforcement, admitted until it is
 * Deny)`; undefined when nothing would be.
 */
export function deniedLine(report: AuditReport): string | undefined {
  const rejected = report.results.filter((r) => r.rejected).length;
  if (!rejected) return undefined;
  // Denials of functions in Warn or Audit enforcement: the API server admits these objects until the mode is Deny.
  const lenient = report.results.filter((r) => r.result === 'denied' && r.enforcement !== 'Deny').length;
  return `${rejected} object${rejected === 1 ? '' : 's'} would be denied${lenient ? ` (${lenient} by functions in Warn or Audit enforcement, admitted until it is Deny)` : ''}`;
}

/** A one-line progress bar redrawn in place; draws nothing unless the stream is a terminal. */
export class ProgressBar {
  private last = '';
  private key = '';
  private drawnAt = 0;
  /** Bar width in characters. */
  static readonly WIDTH = 24;
  /** Objects between redraws when the total is unknown. */
  static readonly STEP = 25;

  constructor(private readonly stream: { isTTY?: boolean; write(text: string): unknown }) {}

  update(p: AuditProgress): void {
    if (!this.stream.isTTY) return;
    // Redraw about 200 times per resource at most, and whenever the resource changes or completes.
    const key = `${p.function}\0${p.resource}`;
    const step = p.total ? Math.max(1, Math.floor(p.total / 200)) : ProgressBar.STEP;
    if (key === this.key && p.done !== p.total && p.done - this.drawnAt < step) return;
    this.key = key;
    this.drawnAt = p.done;
    let line: string;
    if (p.total) {
      const filled = Math.round((ProgressBar.WIDTH * Math.min(p.done, p.total)) / p.total);
      line = `[${'#'.repeat(filled)}${'.'.repeat(ProgressBar.WIDTH - filled)}] ${p.done}/${p.total} ${p.resource} (${p.function})`;
    } else line = `[${'?'.repeat(ProgressBar.WIDTH)}] ${p.done} ${p.resource} (${p.function})`;
    if (line === this.last) return;
    this.last = line;
    this.stream.write(`\r\x1b[2K${line}`);
  }

  /** Clears the bar. */
  done(): void {
    if (this.stream.isTTY && this.last) this.stream.write('\r\x1b[2K');
    this.last = '';
  }
}
