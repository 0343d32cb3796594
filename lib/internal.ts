// The tools' (infra/) entry point into the library's internals: what `klw` needs beyond the
// public entry points. It is not in package.json's exports, so users cannot import it.
export * from './gateway/sources.ts';
export * from './json.ts';
/** The resource descriptors of `on(...)`, by kind, for `klw new --resource`. */
export * as KINDS from './k8s/kinds.ts';
export * from './k8s/url.ts';
export * from './registration.ts';
export * from './review/envelope.ts';
export * from './review/schemas.ts';
