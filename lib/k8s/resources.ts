/**
 * The built-in resources of Kubernetes by minor version, read from the generated table
 * (resource-table.ts): what `klw lint` checks webhook rules against. Not used by functions at run
 * time, so it never reaches a bundle.
 */
import type { Operation } from '../review/schemas.ts';
import { RESOURCE_TABLE, RESOURCE_TABLE_MINORS } from './resource-table.ts';

/** One built-in resource (or subresource) at one group version. */
export interface BuiltinResource {
  group: string;
  version: string;
  /** Plural name, `pods`. */
  resource: string;
  /** Subresource name, `exec`, or undefined for the resource itself. */
  subresource?: string;
  /** Kind of the resource (empty when the API exposes none, as for some create-only resources). */
  kind: string;
  namespaced: boolean;
  /** Admission operations that can happen on it. */
  operations: Operation[];
  /** Kubernetes minors (1.x) serving it. */
  minors: ReadonlySet<number>;
}

/** The first and last Kubernetes minor the table was read for. */
export const [FIRST_TABLE_MINOR, LAST_TABLE_MINOR] = RESOURCE_TABLE_MINORS;

const OPERATION_CODES: Record<string, Operation> = { C: 'CREATE', U: 'UPDATE', D: 'DELETE', X: 'CONNECT' };

function minorSet(text: string): Set<number> {
  const out = new Set<number>();
  for (const part of text.split(',').filter(Boolean)) {
    const [from, to = from] = part.split('-').map(Number) as [number, number?];
    for (let m = from; m <= to!; m++) out.add(m);
  }
  return out;
}

let parsed: BuiltinResource[] | undefined;

/** Every built-in resource and subresource of every minor in the table. */
export function builtinResources(): readonly BuiltinResource[] {
  if (parsed) return parsed;
  const out: BuiltinResource[] = [];
  for (const [id, kind, scope, ops, minors, subresources] of RESOURCE_TABLE) {
    const [group, version, resource] = id.split('/') as [string, string, string];
    const base = { group, version, resource, kind, namespaced: scope === 'N' };
    out.push({ ...base, operations: [...ops].map((c) => OPERATION_CODES[c]!), minors: minorSet(minors) });
    for (const sub of subresources.split(' ').filter(Boolean)) {
      const [name, subOps, subMinors] = sub.split(':') as [string, string, string];
      out.push({
        ...base,
        subresource: name,
        operations: [...subOps].map((c) => OPERATION_CODES[c]!),
        minors: minorSet(subMinors),
      });
    }
  }
  return (parsed = out);
}

/** The groups with built-in resources (`''` is the core group). */
export function builtinGroups(): ReadonlySet<string> {
  return new Set(builtinResources().map((r) => r.group));
}

/**
 * The minor a Kubernetes version is checked as: minors older than the table's first are checked
 * as that one (the table starts there), newer than its last as the last.
 */
export function tableMinor(minor: number): number {
  return Math.min(Math.max(minor, FIRST_TABLE_MINOR), LAST_TABLE_MINOR);
}

/** `18-22, 24` of a set of minors: the versions serving something, for messages. */
export function describeMinors(minors: ReadonlySet<number>): string {
  const sorted = [...minors].sort((a, b) => a - b);
  const parts: string[] = [];
  let start = sorted[0];
  for (let i = 0; i < sorted.length; i++) {
    const m = sorted[i]!;
    if (sorted[i + 1] === m + 1) continue;
    parts.push(start === m ? `1.${m}` : `1.${start}-1.${m}`);
    start = sorted[i + 1];
  }
  return parts.join(', ');
}
