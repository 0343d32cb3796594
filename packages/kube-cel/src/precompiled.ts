/**
 * Precompiled expressions: what compiling an expression without its type check found before the
 * engine parses it (the text cel-go's parser limits and literal rules hand on, whether it needs the
 * Kubernetes libraries), kept as data so that a bundle built ahead of time loads its expressions
 * without reading them again. A form is used only by the package and engine versions it was made
 * with, for the same Kubernetes minor version and declarations; any other compiles as usual.
 */

/** This package's version (package.json; a test holds them equal). */
export const PACKAGE_VERSION = '0.1.0';
/** The engine's version the package is built with (its package.json; a test holds them equal). */
export const ENGINE_VERSION = '8.0.0';
/** What a precompiled form must carry to be used: made by this package on this engine. */
export const FORM_VERSION = `@kube-lambda-webhooks/cel@${PACKAGE_VERSION} @marcbachmann/cel-js@${ENGINE_VERSION}`;

/**
 * Where a bundler puts the forms (as the JSON of an array): esbuild's `define` of
 * `process.env.KUBE_CEL_PRECOMPILED`. Unset, every expression compiles when first used.
 */
export const PRECOMPILED_ENV = 'KUBE_CEL_PRECOMPILED';
/**
 * Set to `1` while a bundle is loaded to learn its expressions: every expression compiled without
 * its type check is then kept, as a form, in `globalThis[Symbol.for(RECORDED_KEY)]`.
 */
export const RECORD_ENV = 'KUBE_CEL_RECORD';
/** The global symbol's key under which recorded forms are kept. */
export const RECORDED_KEY = 'kube-cel.precompiled';
/**
 * The global symbol's key under which, while recording, the loads of chunks under way are kept (the
 * RE2 engine, the Kubernetes libraries): a loader waits for them, and for what they compile, before
 * it reads the forms.
 */
export const PENDING_KEY = 'kube-cel.pending';

/** `load`, kept where a loader waits for it while recording (RECORD_ENV set). */
export function pendingWhileRecording(load: Promise<void>): Promise<void> {
  if (process.env.KUBE_CEL_RECORD !== '1') return load;
  const global = globalThis as unknown as Record<symbol, Promise<void>[] | undefined>;
  (global[Symbol.for(PENDING_KEY)] ??= []).push(load);
  return load;
}

/** A chunk of a bundle loaded on demand: its module once `load` has loaded it. */
export interface Chunk<M> {
  /** The module, once loaded. */
  readonly module: M | undefined;
  /** Loads the module (once; kept where a loader waits while recording); a failed load is tried again at the next call. */
  load(): Promise<void>;
}

/** The chunk `importer` loads (a dynamic import of its module, which the bundler makes a chunk of). */
export function chunk<M>(importer: () => Promise<M>): Chunk<M> {
  let module: M | undefined;
  let loading: Promise<void> | undefined;
  return {
    get module() {
      return module;
    },
    load() {
      loading ??= pendingWhileRecording(
        importer().then(
          (m) => {
            module = m;
          },
          (err) => {
            loading = undefined;
            throw err;
          },
        ),
      );
      return loading;
    },
  };
}

/** An expression compiled ahead of time (without its type check), as JSON. */
export interface PrecompiledExpression {
  /** FORM_VERSION of the package that made it. */
  form: string;
  /** The expression as written. */
  expression: string;
  /** The Kubernetes minor version whose environment compiled it (its mode applied). */
  minor: number;
  /** Variables declared beside the environment's own, as given to compile. */
  declarations?: Record<string, string>;
  /** The text the engine parses. */
  text: string;
  /** True when it needs the environment with the Kubernetes libraries. */
  libraries: boolean;
  /**
   * Its parsed form as data (a Tree of evaluate/tree.ts, checked when loaded), when it is made only of
   * what the tree evaluator runs: then it is evaluated without the engine's environment, unless an
   * evaluation needs it. This module imports nothing, so the type is not named here.
   */
  tree?: readonly unknown[];
}

/** The key of a form: what compiling it depended on. */
function keyOf(expression: string, minor: number, declarations: Record<string, string> | undefined): string {
  return JSON.stringify([minor, declarations ?? null, expression]);
}

/** Forms given by usePrecompiled or the bundle, by key; read from the bundle on first use. */
let forms: Map<string, PrecompiledExpression> | undefined;
/** How many times the forms changed: what is derived from them is kept until it moves. */
let generation = 0;

/** True when `v` has a form's shape and this package's version. */
function usable(v: unknown): v is PrecompiledExpression {
  const f = v as PrecompiledExpression;
  return (
    !!f &&
    typeof f === 'object' &&
    f.form === FORM_VERSION &&
    typeof f.expression === 'string' &&
    typeof f.minor === 'number' &&
    typeof f.text === 'string' &&
    typeof f.libraries === 'boolean' &&
    (f.declarations === undefined || (typeof f.declarations === 'object' && f.declarations !== null))
  );
}

/** The forms a bundler defined (PRECOMPILED_ENV); none when unset or not JSON. */
function bundled(): unknown[] {
  const text = process.env.KUBE_CEL_PRECOMPILED;
  if (!text) return [];
  try {
    const parsed = JSON.parse(text) as unknown;
    return Array.isArray(parsed) ? parsed : [];
  } catch {
    return [];
  }
}

/**
 * Adds precompiled forms: later compilations without the type check of the same expression, minor
 * version and declarations load them. Forms of another package or engine version are left out.
 */
export function usePrecompiled(list: readonly unknown[]): void {
  forms ??= new Map();
  for (const f of list) if (usable(f)) forms.set(keyOf(f.expression, f.minor, f.declarations), f);
  generation++;
}

/** The forms given so far (the bundle's read on first use), and the count of changes to them. */
export function precompiledForms(): { forms: Iterable<PrecompiledExpression>; generation: number } {
  if (!forms) usePrecompiled(bundled());
  return { forms: forms!.values(), generation };
}

/** The form of an expression for a minor version and declarations, if one was given. */
export function precompiledFor(
  expression: string,
  minor: number,
  declarations: Record<string, string> | undefined,
): PrecompiledExpression | undefined {
  if (!forms) usePrecompiled(bundled());
  return forms!.get(keyOf(expression, minor, declarations));
}

/** True while a bundle is loaded to learn its expressions (RECORD_ENV set). */
export function recording(): boolean {
  return process.env.KUBE_CEL_RECORD === '1';
}

/**
 * True when the forms given hold `expression` (for some Kubernetes version and declarations), each
 * with its tree: a bundle then compiles and evaluates it without the engine, as a rule.
 */
export function treesOnly(expression: string): boolean {
  if (!forms) usePrecompiled(bundled());
  let found = false;
  for (const f of forms!.values()) {
    if (f.expression !== expression) continue;
    if (!f.tree) return false;
    found = true;
  }
  return found;
}

/** Keeps a form where a loader reads it (RECORD_ENV set); does nothing otherwise. */
export function recordPrecompiled(form: PrecompiledExpression): void {
  if (!recording()) return;
  const key = Symbol.for(RECORDED_KEY);
  const global = globalThis as unknown as Record<symbol, PrecompiledExpression[] | undefined>;
  const list = (global[key] ??= []);
  if (
    !list.some(
      (f) => keyOf(f.expression, f.minor, f.declarations) === keyOf(form.expression, form.minor, form.declarations),
    )
  )
    list.push(form);
}

/** Forgets the forms given so far (tests). */
export function clearPrecompiled(): void {
  forms = new Map();
  generation++;
}
