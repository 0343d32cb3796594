import assert from 'node:assert/strict';
import { existsSync, readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import type { ConversionWebhook } from '../conversion/webhook.ts';
import { invoke } from '../harness/invoke.ts';
import { conversionReview, kindOf } from '../harness/reviews.ts';
import type { ConversionRegistration } from '../registration.ts';
import type { KubeObject } from '../review/schemas.ts';
import { expectRoundTrip } from './chain.ts';
import {
  ANY_GROUP,
  ANY_VERSION,
  type ConformanceCheck,
  type ConformanceOptions,
  sampleHint,
} from './conformance-shared.ts';
import { asFields, sampleFromSchema } from './schema-sample.ts';

/** What the conversion checks send: group, kind and versions, and each version's schema where the CRD gives one. */
interface ConversionTarget {
  group: string;
  kind: string;
  versions: string[];
  schemas: Map<string, unknown>;
}

/**
 * Versions and kind of a conversion function (from its registration, else its CRD manifest), and
 * its schemas. The YAML parser loads on first use: most test processes never read a manifest.
 */
async function conversionTarget(reg: ConversionRegistration, root: string): Promise<ConversionTarget> {
  const dot = reg.crd.indexOf('.');
  const plural = dot < 0 ? reg.crd : reg.crd.slice(0, dot);
  const group = dot < 0 ? ANY_GROUP : reg.crd.slice(dot + 1);
  let kind = kindOf(plural);
  let versions = reg.versions ?? [];
  const schemas = new Map<string, unknown>();
  if (reg.crdManifest) {
    const file = resolve(root, reg.crdManifest);
    if (!existsSync(file))
      throw new assert.AssertionError({
        message: `${reg.name}: crdManifest ${reg.crdManifest} not found under ${root}`,
      });
    type Version = { name: string; served?: boolean; schema?: { openAPIV3Schema?: unknown } };
    const { parseAllDocuments } = await import('yaml');
    const crd = parseAllDocuments(readFileSync(file, 'utf8'))
      .map((d) => d.toJS() as { kind?: string; spec?: { names?: { kind?: string }; versions?: Version[] } })
      .find((d) => d?.kind === 'CustomResourceDefinition');
    kind = crd?.spec?.names?.kind ?? kind;
    const listed = Array.isArray(crd?.spec?.versions) ? crd.spec.versions : [];
    if (!reg.versions) versions = listed.filter((v) => v?.served !== false).map((v) => v.name);
    for (const v of listed) if (v?.schema?.openAPIV3Schema) schemas.set(v.name, v.schema.openAPIV3Schema);
  }
  return { group, kind, versions, schemas };
}

/** What the checks of one conversion function share: its registration, options and sample maker. */
interface ConversionContext {
  webhook: ConversionWebhook;
  reg: ConversionRegistration;
  root: string;
  /** True when the object sent is generated, not the user's sample. */
  generated: boolean;
  /** The version of the sample given, when it is one of `versions` of `group`. */
  ownVersion: (group: string, versions: string[]) => string | undefined;
  /** An object of `kind` at `group/version`: the user's sample, else one generated from the version's schema. */
  sampleAt: (group: string, kind: string, version: string, schemas: Map<string, unknown>) => KubeObject;
}

/** The checks a conversion webhook gets: it answers every review version it registers, and round-trips objects. */
export function conversionChecks(webhook: ConversionWebhook, options: ConformanceOptions): ConformanceCheck[] {
  const ctx: ConversionContext = {
    webhook,
    reg: webhook.registration,
    root: options.root ?? process.cwd(),
    generated: options.sample === undefined,
    ownVersion: (group, versions) => {
      const apiVersion = options.sample?.apiVersion;
      return versions.find((v) => apiVersion === `${group}/${v}`);
    },
    sampleAt: (group, kind, version, schemas) => {
      if (options.sample) return { ...structuredClone(options.sample), apiVersion: `${group}/${version}` };
      // The CRD's schema for the version, where there is one: its required fields, of their types.
      const object = asFields(sampleFromSchema(schemas.get(version)));
      return {
        ...object,
        apiVersion: `${group}/${version}`,
        kind,
        metadata: { name: 'conformance', namespace: 'default', uid: '5f7b1d5e-0000-4000-8000-000000000002' },
      };
    },
  };
  return [reviewVersionsCheck(ctx), roundTripCheck(ctx)];
}

/** Answers each ConversionReview version it registers, converting to the version asked for. */
function reviewVersionsCheck(ctx: ConversionContext): ConformanceCheck {
  const { webhook, reg } = ctx;
  return {
    name: `answers ${reg.conversionReviewVersions.join(' and ')} ConversionReviews between its versions, as the API server requires`,
    run: async () => {
      const { group, kind, versions, schemas } = await conversionTarget(reg, ctx.root);
      for (const version of reg.conversionReviewVersions) {
        const own = ctx.ownVersion(group, versions);
        const from = own ?? versions[0] ?? ANY_VERSION;
        const to = versions.find((v) => v !== from) ?? from;
        const review = conversionReview([ctx.sampleAt(group, kind, from, schemas)], `${group}/${to}`, { version });
        // invoke checks the answer as the API server does: HTTP 200, apiVersion, uid echoed, schema, object count.
        const result = await invoke(webhook, review);
        // Refusing a generated object is a valid answer: the function may need fields it cannot guess.
        if (result.status === 'Failed' && ctx.generated) continue;
        assert.equal(
          result.status,
          'Success',
          `${reg.name}: ${group}/${from} → ${group}/${to} (apiextensions.k8s.io/${version}) failed: ${result.message}`,
        );
        assert.equal(
          result.convertedObjects[0]?.apiVersion,
          `${group}/${to}`,
          `${reg.name}: the converted object is not at ${group}/${to}`,
        );
      }
    },
  };
}

/** Round-trips an object through every version it declares (skipped when it refuses the generated object). */
function roundTripCheck(ctx: ConversionContext): ConformanceCheck {
  const { webhook, reg } = ctx;
  return {
    name: 'round-trips an object through every version it declares',
    run: async () => {
      const { group, kind, versions, schemas } = await conversionTarget(reg, ctx.root);
      assert.ok(
        versions.length,
        `${reg.name}: declares no versions: give the registration \`versions\` (or a crdManifest listing them) so conversions can be checked`,
      );
      if (ctx.generated) {
        const refused = await firstRefusal(ctx, group, kind, versions, schemas);
        if (refused) return { skipped: refused };
      }
      // A sample at one of the versions is an object of that version only: the round trip starts there.
      const own = ctx.ownVersion(group, versions);
      for (const version of own ? [own] : versions) {
        await expectRoundTrip(
          webhook,
          ctx.sampleAt(group, kind, version, schemas),
          versions.map((v) => `${group}/${v}`),
        );
      }
      return undefined;
    },
  };
}

/**
 * Why a generated object cannot be round-tripped (the function refuses one of its conversions),
 * or undefined: the check then asks for an object it converts.
 */
async function firstRefusal(
  ctx: ConversionContext,
  group: string,
  kind: string,
  versions: string[],
  schemas: Map<string, unknown>,
): Promise<string | undefined> {
  for (const from of versions) {
    for (const to of versions.filter((v) => v !== from)) {
      const review = conversionReview([ctx.sampleAt(group, kind, from, schemas)], `${group}/${to}`);
      const result = await invoke(ctx.webhook, review);
      if (result.status === 'Failed') {
        return (
          `${ctx.reg.name}: the generated ${kind} at ${group}/${from} could not be converted to ${group}/${to} ` +
          `(${JSON.stringify(result.message ?? '')}), so the round trip needs an object it converts; ` +
          sampleHint(ctx.reg.name)
        );
      }
    }
  }
  return undefined;
}
