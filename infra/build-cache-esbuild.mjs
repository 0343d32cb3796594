// The esbuild side of the cached build (infra/build-cache.mjs): the build itself and the plugins
// it runs with. Plain JavaScript, as that module is: klw runs it before anything can load TypeScript.
import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join, resolve, sep } from 'node:path';
import { pathToFileURL } from 'node:url';

/** The sha256 of `data`, in hex. */
function sha256(data) {
  return createHash('sha256').update(data).digest('hex');
}

/**
 * An esbuild plugin reading each source outside node_modules itself, keeping in `read` the hash
 * of the text it built (the manifest's record of that source); `withSourceUrls` gives each module
 * its own source file's `import.meta.url` (and `dirname`, `filename`), as it has when run from the
 * sources: the files it reads beside itself (templates, worker scripts) are found there, not
 * beside the build.
 */
function readSources(esbuild, withSourceUrls, read) {
  return {
    name: 'klw-read-sources',
    setup(build) {
      build.onLoad({ filter: /\.[cm]?[jt]s$/ }, async (args) => {
        if (args.path.includes(`${sep}node_modules${sep}`)) return undefined;
        const bytes = readFileSync(args.path);
        read.set(args.path, sha256(bytes));
        const text = bytes.toString('utf8');
        const loader = /\.[cm]?ts$/.test(args.path) ? 'ts' : 'js';
        if (!withSourceUrls || !text.includes('import.meta')) return { contents: text, loader };
        const out = await esbuild.transform(text, {
          loader,
          format: 'esm',
          sourcefile: args.path,
          sourcemap: 'inline',
          define: {
            'import.meta.url': JSON.stringify(pathToFileURL(args.path).href),
            'import.meta.dirname': JSON.stringify(dirname(args.path)),
            'import.meta.filename': JSON.stringify(args.path),
          },
        });
        return { contents: out.code, loader: 'js' };
      });
    },
  };
}

/** Marks the resolutions missingDynamicImports makes itself, so that it does not answer them again. */
const OWN_RESOLVE = Symbol('klw-own-resolve');

/**
 * An esbuild plugin leaving an `import()` of a relative file that is not there (the compiled
 * package's, in a checkout) to fail when it runs, as it does from the sources, rather than
 * failing the build: it imports the file's absolute URL.
 */
function missingDynamicImports() {
  return {
    name: 'klw-missing-dynamic-imports',
    setup(build) {
      build.onResolve({ filter: /^\.{1,2}\// }, async (args) => {
        if (args.kind !== 'dynamic-import' || args.pluginData === OWN_RESOLVE) return undefined;
        const { kind, importer, resolveDir } = args;
        const found = await build.resolve(args.path, { kind, importer, resolveDir, pluginData: OWN_RESOLVE });
        if (!found.errors.length) return undefined;
        return { path: pathToFileURL(resolve(resolveDir, args.path)).href, external: true };
      });
    },
  };
}

/** The namespace of the module standing in for esbuild (requiredEsbuild). */
export const REQUIRED_ESBUILD = 'klw-required-esbuild';

/**
 * An esbuild plugin standing a module in for the esbuild package wherever the code imports it: a
 * module that requires the very package the import would load (resolved from the importer) and
 * exports its names. Node imports a CommonJS package only after scanning its source for those
 * names, which costs every process that loads the toolkit's build code most of a tenth of a second.
 * The package.json of each esbuild it stands in for goes into `packages`: an input of the build.
 */
function requiredEsbuild(packages) {
  return {
    name: REQUIRED_ESBUILD,
    setup(build) {
      build.onResolve({ filter: /^esbuild$/ }, (args) => {
        if (args.kind !== 'import-statement' && args.kind !== 'dynamic-import') return undefined;
        try {
          const main = createRequire(join(args.resolveDir, 'index.js')).resolve('esbuild');
          packages.add(join(dirname(main), '..', 'package.json'));
          return { path: main, namespace: REQUIRED_ESBUILD };
        } catch {
          return undefined; // not installed there: left to Node's resolution, as without this plugin
        }
      });
      build.onLoad({ filter: /./, namespace: REQUIRED_ESBUILD }, (args) => {
        const names = Object.keys(createRequire(args.path)(args.path)).filter(
          (name) => name !== 'default' && /^[A-Za-z_$][\w$]*$/.test(name),
        );
        const main = JSON.stringify(args.path);
        return {
          contents:
            `import { createRequire } from 'node:module';\n` +
            `const esbuild = createRequire(${main})(${main});\n` +
            `export default esbuild;\nexport const { ${names.join(', ')} } = esbuild;\n`,
          loader: 'js',
        };
      });
    },
  };
}

/**
 * The esbuild build of the entry points into `outdir` (in memory), with `read`: the hash of each
 * source as the build read it. missingDynamicImports, which esbuild consults for every relative
 * import (a round trip to this process each, a tenth of a build's time), joins only a build that
 * failed to resolve something: one that builds without it has no import() of a missing file.
 */
export async function bundled(esbuild, spec, outdir) {
  const read = new Map();
  const packages = new Set();
  const options = {
    absWorkingDir: spec.root,
    entryPoints: spec.entryPoints,
    bundle: true,
    splitting: true,
    format: 'esm',
    platform: 'node',
    target: 'node20',
    packages: 'external',
    sourcemap: 'linked',
    // Stack traces need only the mappings: the sources are beside the build, in the checkout.
    // Without their text the maps are a fraction of the size, and Node reads them at every load.
    sourcesContent: false,
    outdir,
    outExtension: { '.js': '.mjs' },
    metafile: true,
    write: false,
    logLevel: 'silent',
    plugins: [requiredEsbuild(packages), readSources(esbuild, spec.sourceUrls, read)],
  };
  try {
    return { out: await esbuild.build(options), read, packages };
  } catch (error) {
    if (!error?.errors?.some?.((e) => /^Could not resolve /.test(String(e?.text)))) throw error;
  }
  // An import() of a missing file, perhaps: built again, such imports left to fail when they run.
  read.clear();
  packages.clear();
  const plugins = [missingDynamicImports(), ...options.plugins];
  return { out: await esbuild.build({ ...options, plugins }), read, packages };
}
