import { execFile } from 'node:child_process';
import { existsSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { parseAllDocuments } from 'yaml';
import { KlwError } from '../errors.ts';
import { readRegularFile } from '../files.ts';
import { writePrivate } from './certs.ts';

/** Runs kubectl with arguments (and stdin); never throws for a non-zero exit. */
export type Kubectl = (args: string[], input?: string) => Promise<{ code: number; stdout: string; stderr: string }>;

/** kubectl on PATH, with `--kubeconfig` when given. */
export function kubectlRunner(kubeconfig?: string): Kubectl {
  return (args, input) =>
    new Promise((resolve) => {
      const child = execFile(
        'kubectl',
        [...(kubeconfig ? ['--kubeconfig', kubeconfig] : []), ...args],
        { encoding: 'utf8', maxBuffer: 64 << 20 },
        (err, stdout, stderr) => {
          const code = err
            ? typeof (err as { code?: unknown }).code === 'number'
              ? (err as { code: number }).code
              : 1
            : 0;
          resolve({ code, stdout, stderr: stderr || (err ? err.message : '') });
        },
      );
      if (input !== undefined) child.stdin?.end(input);
    });
}

/** One object `--apply` created or changed, and what was there before. */
export interface AppliedObject {
  apiVersion: string;
  kind: string;
  name: string;
  /** The object before (for a webhook configuration), or undefined when --apply created it. */
  previous?: Record<string, unknown>;
  /** For a CRD: its `spec.conversion` before, or undefined when --apply created the CRD. */
  previousConversion?: Record<string, unknown>;
  /** For a CRD: true when it existed before. */
  existed?: boolean;
}

/** What `klw start --apply` registered, kept in the state dir until it is removed. */
export interface AppliedRecord {
  version: 1;
  /** The emulator that applied it. */
  pid: number;
  kubeconfig?: string;
  appliedAt: string;
  objects: AppliedObject[];
}

/** `<state-dir>/applied.json`. */
export function recordPath(stateDir: string): string {
  return join(stateDir, 'applied.json');
}

/** The record of what is applied, or undefined. */
export function readRecord(stateDir: string): AppliedRecord | undefined {
  const file = recordPath(stateDir);
  if (!existsSync(file)) return undefined;
  try {
    return JSON.parse(readRegularFile(file)) as AppliedRecord;
  } catch {
    throw new KlwError(
      `${file} is not readable JSON; remove what it registered by hand (kubectl delete validatingwebhookconfiguration,mutatingwebhookconfiguration <name>) and delete the file`,
    );
  }
}

function writeRecord(stateDir: string, record: AppliedRecord): void {
  writePrivate(recordPath(stateDir), `${JSON.stringify(record, null, 2)}\n`);
}

/** True when a process with this id runs. */
export function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/** kubectl's resource argument for an object: `kind.group`. */
function resource(obj: { apiVersion: string; kind: string }): string {
  const group = obj.apiVersion.includes('/') ? obj.apiVersion.split('/')[0] : '';
  return group ? `${obj.kind.toLowerCase()}.${group}` : obj.kind.toLowerCase();
}

/** Fields the API server owns: dropped from a saved object so it can be applied back. */
function restorable(obj: Record<string, unknown>): Record<string, unknown> {
  const { status: _status, ...rest } = obj;
  const metadata = { ...(rest.metadata as Record<string, unknown>) };
  for (const field of ['resourceVersion', 'uid', 'creationTimestamp', 'managedFields', 'generation', 'selfLink'])
    delete metadata[field];
  const annotations = { ...(metadata.annotations as Record<string, string> | undefined) };
  delete annotations['kubectl.kubernetes.io/last-applied-configuration'];
  if (Object.keys(annotations).length) metadata.annotations = annotations;
  else delete metadata.annotations;
  return { ...rest, metadata };
}

async function current(
  kubectl: Kubectl,
  obj: { apiVersion: string; kind: string; name: string },
): Promise<Record<string, unknown> | undefined> {
  const out = await kubectl(['get', resource(obj), obj.name, '-o', 'json', '--ignore-not-found']);
  if (out.code !== 0) throw new KlwError(`kubectl get ${resource(obj)} ${obj.name} failed: ${out.stderr.trim()}`);
  return out.stdout.trim() ? (JSON.parse(out.stdout) as Record<string, unknown>) : undefined;
}

/**
 * Applies the manifests and records exactly what was applied, and what each object was
 * before, in `<state-dir>/applied.json` (written before kubectl runs, so a crash halfway
 * is cleaned up too). Applied again (watch), it keeps the first "before" and restores
 * objects no longer in the manifests.
 */
export async function applyRecorded(
  kubectl: Kubectl,
  manifestsPath: string,
  stateDir: string,
  kubeconfig?: string,
): Promise<AppliedRecord> {
  const docs = parseAllDocuments(readRegularFile(manifestsPath))
    .map((d) => d.toJS() as { apiVersion: string; kind: string; metadata: { name: string } } | null)
    .filter((d): d is { apiVersion: string; kind: string; metadata: { name: string } } => d !== null);
  const record: AppliedRecord = readRecord(stateDir) ?? {
    version: 1,
    pid: process.pid,
    appliedAt: new Date().toISOString(),
    objects: [],
    ...(kubeconfig ? { kubeconfig } : {}),
  };
  record.pid = process.pid;
  const keep: AppliedObject[] = [];
  for (const doc of docs) {
    const known = record.objects.find((o) => o.kind === doc.kind && o.name === doc.metadata.name);
    if (known) {
      keep.push(known);
      continue;
    }
    const before = await current(kubectl, { apiVersion: doc.apiVersion, kind: doc.kind, name: doc.metadata.name });
    const entry: AppliedObject = { apiVersion: doc.apiVersion, kind: doc.kind, name: doc.metadata.name };
    if (doc.kind === 'CustomResourceDefinition') {
      entry.existed = before !== undefined;
      const conversion = (before?.spec as { conversion?: Record<string, unknown> } | undefined)?.conversion;
      if (conversion) entry.previousConversion = conversion;
    } else if (before) entry.previous = restorable(before);
    keep.push(entry);
  }
  const gone = record.objects.filter((o) => !keep.includes(o));
  record.objects = [...keep, ...gone];
  writeRecord(stateDir, record);
  const out = await kubectl(['apply', '-f', manifestsPath]);
  if (out.code !== 0) throw new KlwError(`kubectl apply failed: ${out.stderr.trim()}`);
  for (const obj of gone) await restore(kubectl, obj);
  record.objects = keep;
  writeRecord(stateDir, record);
  return record;
}

/** The JSON Patch that puts a CRD's conversion back whole (a merge patch would keep fields of the applied one, e.g. `url` beside the old `service`). */
function conversionPatch(
  obj: AppliedObject,
): Array<{ op: 'replace'; path: '/spec/conversion'; value: Record<string, unknown> }> {
  return [{ op: 'replace', path: '/spec/conversion', value: obj.previousConversion ?? { strategy: 'None' } }];
}

/** Puts one object back as it was before --apply. */
async function restore(kubectl: Kubectl, obj: AppliedObject): Promise<string> {
  if (obj.kind === 'CustomResourceDefinition') {
    // A CRD is never deleted (that would delete every custom resource): its conversion goes back.
    const out = await kubectl([
      'patch',
      resource(obj),
      obj.name,
      '--type',
      'json',
      '-p',
      JSON.stringify(conversionPatch(obj)),
    ]);
    if (out.code !== 0 && !/not ?found/i.test(out.stderr))
      throw new KlwError(`kubectl patch ${resource(obj)} ${obj.name} failed: ${out.stderr.trim()}`);
    return obj.existed
      ? `restored the conversion of ${obj.name}`
      : `set the conversion of ${obj.name} (created by --apply) to None; delete it with kubectl delete crd ${obj.name} if it is not wanted`;
  }
  if (obj.previous) {
    const out = await kubectl(['replace', '-f', '-'], JSON.stringify(obj.previous));
    if (out.code !== 0) throw new KlwError(`restoring ${obj.kind} ${obj.name} failed: ${out.stderr.trim()}`);
    return `restored ${obj.kind} ${obj.name} as it was`;
  }
  const out = await kubectl(['delete', resource(obj), obj.name, '--ignore-not-found']);
  if (out.code !== 0) throw new KlwError(`kubectl delete ${resource(obj)} ${obj.name} failed: ${out.stderr.trim()}`);
  return `deleted ${obj.kind} ${obj.name}`;
}

/** Webhook configurations first, CRDs last: a configuration left behind blocks requests, a CRD's conversion only its own objects. */
function removalOrder(objects: AppliedObject[]): AppliedObject[] {
  return [
    ...objects.filter((o) => o.kind !== 'CustomResourceDefinition'),
    ...objects.filter((o) => o.kind === 'CustomResourceDefinition'),
  ];
}

/**
 * Removes everything the record says --apply registered (restoring what was there before),
 * webhook configurations first, going on past a failure. The record is then deleted, or,
 * when some failed, rewritten with only those and a KlwError naming them is thrown.
 * False when there was no record.
 */
export async function unregister(
  kubectl: Kubectl,
  stateDir: string,
  say: (line: string) => void = () => {},
): Promise<boolean> {
  const record = readRecord(stateDir);
  if (!record) return false;
  const failed: Array<{ obj: AppliedObject; error: string }> = [];
  for (const obj of removalOrder(record.objects)) {
    try {
      say(`  ${await restore(kubectl, obj)}`);
    } catch (err) {
      failed.push({ obj, error: (err as Error).message });
      say(`  FAILED: ${(err as Error).message}`);
    }
  }
  if (!failed.length) {
    rmSync(recordPath(stateDir), { force: true });
    return true;
  }
  writeRecord(stateDir, { ...record, objects: record.objects.filter((o) => failed.some((f) => f.obj === o)) });
  throw new KlwError(
    `could not remove ${failed.map((f) => `${f.obj.kind} ${f.obj.name}`).join(', ')} (kept in ${recordPath(stateDir)}; fix the cause and run klw local unregister again)`,
  );
}

/** How the --apply banner describes one object: what was done and what happens on stop. */
export function appliedNote(obj: AppliedObject): string {
  if (obj.kind === 'CustomResourceDefinition')
    return obj.existed ? 'conversion changed; restored on stop' : 'created; kept on stop, its conversion set to None';
  return obj.previous ? 'changed; restored on stop' : 'created; removed on stop';
}

/** The lines `klw start` without --apply prints when a record of an earlier --apply run is left over. */
export function leftoverNotice(stateDir: string, stateDirOption = '.klw/local'): string[] {
  const record = readRecord(stateDir);
  if (!record || alive(record.pid)) return [];
  return [
    `note: an earlier klw start --apply (pid ${record.pid}) stopped without removing what it registered: ${record.objects.map((o) => `${o.kind} ${o.name}`).join(', ')}`,
    `  the API server still calls the URLs in them; remove them with: klw local unregister${stateDirOption !== '.klw/local' ? ` --state-dir ${stateDirOption}` : ''}`,
  ];
}

/** `text` quoted for a POSIX shell. */
function shellQuote(text: string): string {
  return `'${text.replaceAll("'", `'\\''`)}'`;
}

/** The commands that undo a record by hand, for the loud message --apply prints, webhook configurations first. */
export function manualRemoval(record: AppliedRecord): string[] {
  return removalOrder(record.objects).map((o) =>
    o.kind === 'CustomResourceDefinition'
      ? `kubectl patch crd ${o.name} --type json -p ${shellQuote(JSON.stringify(conversionPatch(o)))}`
      : o.previous
        ? `kubectl replace -f <saved ${o.kind} ${o.name} in applied.json>`
        : `kubectl delete ${resource(o)} ${o.name}`,
  );
}
