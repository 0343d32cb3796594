import { existsSync, readdirSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import type { AdmissionWebhook } from '../lib/admission/webhook.ts';
import type { ConversionWebhook } from '../lib/conversion/webhook.ts';
import type { Registration } from '../lib/registration.ts';

/** A function found under `functions/`: where its code is and what it registers. */
export interface FunctionEntry {
  name: string;
  /** Absolute path of `functions/<name>/index.ts`. */
  entry: string;
  webhook: AdmissionWebhook | ConversionWebhook;
  registration: Registration;
}

/** Failure of a klw command, reported as one line without a stack. */
export class KlwError extends Error {
  override name = 'KlwError';
}

/** The names of the function folders under `<root>/functions` (those with an index.ts), sorted. */
export function functionNames(root: string): string[] {
  const dir = join(root, 'functions');
  if (!existsSync(dir)) return [];
  return readdirSync(dir, { withFileTypes: true })
    .filter((d) => d.isDirectory() && existsSync(join(dir, d.name, 'index.ts')))
    .map((d) => d.name)
    .sort();
}

/**
 * Imports every function (or the named ones) and reads the registration it exports:
 * the one source of truth for bundles, manifests and serverless.yml.
 */
export async function loadFunctions(root: string, only?: string[]): Promise<FunctionEntry[]> {
  const names = functionNames(root);
  for (const wanted of only ?? []) {
    if (!names.includes(wanted)) throw new KlwError(`no function "${wanted}" in ${join(root, 'functions')} (have: ${names.join(', ') || 'none'})`);
  }
  const entries: FunctionEntry[] = [];
  for (const name of only?.length ? names.filter((n) => only.includes(n)) : names) {
    const entry = resolve(root, 'functions', name, 'index.ts');
    const mod = (await import(pathToFileURL(entry).href)) as { default?: AdmissionWebhook | ConversionWebhook };
    const webhook = mod.default;
    if (!webhook?.registration || typeof webhook.handler !== 'function') {
      throw new KlwError(`functions/${name}/index.ts must export default the result of defineValidatingWebhook, defineMutatingWebhook or defineConversionWebhook`);
    }
    if (webhook.registration.name !== name) {
      throw new KlwError(`functions/${name} registers the name "${webhook.registration.name}"; the folder and the name must match`);
    }
    entries.push({ name, entry, webhook, registration: webhook.registration });
  }
  return entries;
}
