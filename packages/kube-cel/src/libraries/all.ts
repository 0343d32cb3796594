/**
 * The Kubernetes libraries of the environment, registered together: lists, strings, regex, URLs,
 * quantity, sets, IP and CIDR, format, semver. A function's bundle replaces this module with
 * all-lazy.ts, which keeps them in a chunk of their own, loaded by loadLibraries when an expression
 * needs them (needsLibraries); here they are loaded already.
 */
import type { Environment } from '../engine.ts';
import { registerLists, registerQuantity, registerRegex, registerStrings, registerUrls } from './bind.ts';
import { registerFormat, registerIpAndCidr, registerListsV3, registerSemver, registerSets } from './bind-later.ts';

/** Registers the Kubernetes libraries in `env`. */
export function registerLibraries(env: Environment): void {
  for (const register of [registerLists, registerStrings, registerRegex, registerUrls, registerQuantity]) register(env);
  for (const register of [registerSets, registerIpAndCidr, registerFormat, registerSemver, registerListsV3])
    register(env);
}

/**
 * Loads the Kubernetes libraries ahead of use: in a function's bundle they are a chunk of their own,
 * which only this reaches: await it before compiling expressions that need them (needsLibraries
 * tells). Elsewhere they are loaded with the package, and this does nothing.
 */
export function loadLibraries(): Promise<void> {
  return Promise.resolve();
}
