import { readFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { isDns1123Label } from '../lib/k8s/names.ts';
import { pathTaken, writeFileSafely } from './files.ts';
import { KlwError } from './errors.ts';
import {
  type FunctionType,
  DEFAULT_RESOURCE,
  resolveResource,
  resourceFromName,
  resourceValues,
} from './scaffold-resource.ts';

const TEMPLATES = fileURLToPath(new URL('./templates/', import.meta.url));

export type { FunctionType } from './scaffold-resource.ts';

/** What `klw new` scaffolds: a webhook of a type, or a validating or mutating policy. */
export type ScaffoldType = FunctionType | 'validating-policy' | 'mutating-policy';

/** Options of `scaffold`. */
export interface ScaffoldOptions {
  /** The resource of an admission function (`pods`, `deployments.apps`); default: the one its name says. */
  resource?: string;
}

/**
 * Writes a new function, its test (and for conversion its CRD) from the templates; returns the
 * files. An admission function is written for `options.resource`, else the resource its name
 * says (`pod-policy` → pods), else configmaps.
 */
export function scaffold(root: string, type: ScaffoldType, name: string, options: ScaffoldOptions = {}): string[] {
  if (!isDns1123Label(name))
    throw new KlwError(`"${name}" is not a valid function name: use lower-case letters, digits and '-' (at most 63)`);
  if (type === 'conversion' && options.resource !== undefined) {
    throw new KlwError('--resource is for admission functions; a conversion function serves the CRD it is written for');
  }
  const resource =
    type === 'conversion'
      ? undefined
      : options.resource !== undefined
        ? resolveResource(options.resource)
        : (resourceFromName(name) ?? resolveResource(DEFAULT_RESOURCE));
  // A policy takes the operations of the webhook of its kind.
  const operations = type === 'conversion' ? type : type.startsWith('mutating') ? 'mutating' : 'validating';
  const values: Record<string, string> = { __NAME__: name, ...(resource ? resourceValues(operations, resource) : {}) };
  const dir = join(root, 'functions', name);
  if (pathTaken(dir)) throw new KlwError(`functions/${name} already exists`);
  const render = (template: string) =>
    Object.entries(values).reduce(
      (text, [key, value]) => text.replaceAll(key, value),
      readFileSync(join(TEMPLATES, type, template), 'utf8'),
    );
  const files: Array<[string, string]> = [
    [join(dir, 'index.ts'), render('index.ts.tmpl')],
    [join(root, 'test', 'functions', `${name}.test.ts`), render('test.ts.tmpl')],
  ];
  if (type === 'conversion') files.push([join(dir, 'crd.yaml'), render('crd.yaml.tmpl')]);
  for (const [file] of files) {
    if (pathTaken(file)) throw new KlwError(`${relative(root, file)} already exists`);
  }
  for (const [file, text] of files) {
    writeFileSafely(file, text, { exclusive: true, parents: true });
  }
  return files.map(([file]) => relative(root, file));
}
