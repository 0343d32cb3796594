// The Kubernetes CEL libraries as pure functions, engine-independent: an engine binds them to its
// function declarations and charges their cost with libraryCallCost. One namespace per library.
export * as cost from '../cost/library-costs.ts';
export * as format from './format.ts';
export * as go from './go.ts';
export * as net from './ip.ts';
export * as lists from './lists.ts';
export * as semver from './semver.ts';
export * as sets from './sets.ts';
export * as stringFormat from './strformat.ts';
export * as strings from './strings.ts';
