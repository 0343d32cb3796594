// Types of infra/build-cache-esbuild.mjs (plain JavaScript, as klw runs it before TypeScript loads).
import type * as esbuild from 'esbuild';

/** The namespace of the module standing in for esbuild in a cached build. */
export const REQUIRED_ESBUILD: string;

/** What the cached build asks of esbuild: the root, the entry points, and whether modules keep their sources' import.meta. */
export interface BundledSpec {
  root: string;
  entryPoints: string[];
  sourceUrls?: boolean;
}

/**
 * The esbuild build of the entry points into `outdir` (in memory): its result, the hash of each
 * source it read, and the package.json of each esbuild it stood a module in for.
 */
export function bundled(
  build: typeof esbuild,
  spec: BundledSpec,
  outdir: string,
): Promise<{
  out: esbuild.BuildResult & { outputFiles: esbuild.OutputFile[] };
  read: Map<string, string>;
  packages: Set<string>;
}>;
