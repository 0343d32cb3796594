import { existsSync, readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { parseAllDocuments } from 'yaml';
import type { Operation, ConversionRegistration, Registration, EventSource } from '../../lib/internal.ts';
import { admissionReview, conversionReview, kindOf } from '../../lib/harness/reviews.ts';
import { toEvent } from '../../lib/harness/events.ts';
import { KlwError } from '../errors.ts';

/** What `klw local generate-review` makes. */
export interface SampleOptions {
  operation?: Operation;
  version?: 'v1' | 'v1beta1';
  /** Wrap the review in this event format instead of printing the bare review. */
  event?: EventSource;
  /** Path the event carries (with the path secret when the function checks one). */
  path?: string;
  /** Project root, where a conversion function's CRD manifest is read (its kind, group and versions); default the working directory. */
  root?: string;
}

/** Kind, group and served versions of a conversion function's CRD, from its manifest (`crdManifest`, else `functions/<name>/crd.yaml`), where there is one. */
export function crdNames(
  root: string,
  reg: ConversionRegistration,
): { kind?: string; group?: string; versions?: string[] } {
  const file = reg.crdManifest ? resolve(root, reg.crdManifest) : join(root, 'functions', reg.name, 'crd.yaml');
  if (!existsSync(file)) return {};
  type Crd = {
    kind?: string;
    metadata?: { name?: string };
    spec?: { group?: string; names?: { kind?: string }; versions?: Array<{ name?: string; served?: boolean }> };
  };
  let crds: Crd[];
  try {
    crds = parseAllDocuments(readFileSync(file, 'utf8'))
      .map((d) => d.toJS() as Crd)
      .filter((d) => d?.kind === 'CustomResourceDefinition');
  } catch {
    return {}; // lint and klw manifests report a broken manifest
  }
  const crd = crds.find((d) => d.metadata?.name === reg.crd) ?? crds[0];
  const versions = crd?.spec?.versions
    ?.filter((v) => v.served !== false && typeof v.name === 'string')
    .map((v) => v.name!);
  return {
    ...(typeof crd?.spec?.names?.kind === 'string' ? { kind: crd.spec.names.kind } : {}),
    ...(typeof crd?.spec?.group === 'string' ? { group: crd.spec.group } : {}),
    ...(versions?.length ? { versions } : {}),
  };
}

const WILDCARD_STAND_IN = { group: 'example.com', version: 'v1', resource: 'widgets' };

/**
 * A sample review for a function, built from its registration as `sam local
 * generate-event` builds events: an AdmissionReview for the first resource and operation
 * its rules match (or the one asked for), or a ConversionReview between its CRD versions
 * (kind, group and versions as its CRD manifest names them).
 */
export function sampleReview(reg: Registration, options: SampleOptions = {}): unknown {
  let review: unknown;
  if (reg.type === 'conversion') {
    const crd = crdNames(options.root ?? process.cwd(), reg);
    const group = crd.group ?? (reg.crd.split('.').slice(1).join('.') || 'example.com');
    const plural = reg.crd.split('.')[0]!;
    const versions = reg.versions?.length ? reg.versions : (crd.versions ?? ['v1beta1', 'v1']);
    const from = versions[0]!;
    const to = versions[versions.length - 1]!;
    review = conversionReview(
      [
        {
          apiVersion: `${group}/${from}`,
          kind: crd.kind ?? kindOf(plural),
          metadata: { name: 'sample', namespace: 'default' },
        },
      ],
      `${group}/${to}`,
      { version: options.version ?? 'v1' },
    );
  } else {
    const rule = reg.rules.find(
      (r) => !options.operation || r.operations.includes(options.operation) || r.operations.includes('*'),
    );
    if (!rule && options.operation) throw new KlwError(`${reg.name} registers no rule for ${options.operation}`);
    const group =
      rule?.apiGroups?.find((g) => g !== '*') ?? (rule?.apiGroups?.includes('*') ? WILDCARD_STAND_IN.group : '');
    const version = rule?.apiVersions?.find((v) => v !== '*') ?? WILDCARD_STAND_IN.version;
    const resource = (rule?.resources?.find((r) => r !== '*') ?? WILDCARD_STAND_IN.resource).split('/')[0]!;
    const operation =
      options.operation ??
      (rule?.operations.find((o) => o !== '*' && o !== 'CONNECT') as Operation | undefined) ??
      'CREATE';
    const object = {
      apiVersion: group ? `${group}/${version}` : version,
      kind: kindOf(resource),
      metadata: { name: 'sample', ...(rule?.scope === 'Cluster' ? {} : { namespace: 'default' }) },
    };
    review = admissionReview(operation === 'DELETE' ? null : object, {
      operation,
      version: options.version ?? 'v1',
      resource,
      ...(operation === 'UPDATE' || operation === 'DELETE' ? { oldObject: object } : {}),
    });
  }
  if (!options.event) return review;
  return toEvent(review as never, {
    format: options.event,
    path: options.path ?? reg.path,
    timeout: `${reg.timeoutSeconds}s`,
  });
}
