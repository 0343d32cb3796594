// Types of build-cache.mjs (plain JavaScript, so that klw can run it before it can load TypeScript).

/** The toolkit's root: the repository in a checkout. */
export declare const TOOLKIT: string;
/** Where the toolkit's build is kept (node_modules/.cache/klw in the toolkit). */
export declare const TOOLKIT_CACHE: string;
/** The toolkit's entry points: klw's command line and the Serverless plugin. */
export declare const TOOLKIT_ENTRIES: Record<string, string>;
/** Where the loader child's build is kept (node_modules/.cache/klw-loader in the toolkit). */
export declare const LOADER_CACHE: string;
/** The loader child's entry point. */
export declare const LOADER_ENTRIES: Record<string, string>;

/** What to build and where to keep it; each defaults to the toolkit's own. */
export interface CachedBuildOptions {
  /** The folder the entry points (and the tsconfig.json that applies) are relative to. */
  root?: string;
  /** The cache folder: the manifest and the builds, each in a folder named by its content. */
  cacheDir?: string;
  /** Output name to source file. */
  entryPoints?: Record<string, string>;
  /** True (the default): each module's `import.meta.url` is its source file's; false: the built file's. */
  sourceUrls?: boolean;
  /** For tests: runs once esbuild has read the sources, before the build is recorded. */
  afterBuild?: () => void;
  /** For tests: the clock (ms) by which a check judges whether the build's files are old enough to record as verified. */
  now?: () => number;
}

/** A build in the cache: its folder, and whether this call built it (else it was reused). */
export interface CachedBuild {
  dir: string;
  built: boolean;
}

/** `dir`, made a folder when missing; anything else there (a link, a file) is removed first, never followed. */
export declare function cacheFolder(dir: string): string;

/** The folder of the build of the entry points, built when the cache has none or a source changed since. */
export declare function cachedBuild(options?: CachedBuildOptions): Promise<CachedBuild>;

/** The sha256 of `data`, in hex. */
export declare function sha256(data: string | Uint8Array): string;

/** The sha256 of the file's content, or '-' when it cannot be read. */
export declare function hashOf(file: string): string;
/** A build file's state as the verified record keeps it: while it holds, the file is the one hashed. */
export declare function fileState(name: string, stat: import('node:fs').Stats): string;
