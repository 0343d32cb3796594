// The toolkit's cached build: built once, reused while its sources are unchanged, built again
// when one changed or when the cache holds anything it cannot trust.
// klw-test: no-tsx (what it imports at run time is the JavaScript it built)
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import {
  existsSync,
  lstatSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  statSync,
  symlinkSync,
  utimesSync,
  writeFileSync,
} from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { basename, join } from 'node:path';
import { after, describe, it } from 'node:test';
import { pathToFileURL } from 'node:url';
import { promisify } from 'node:util';
import {
  cachedBuild,
  LOADER_CACHE,
  LOADER_ENTRIES,
  TOOLKIT,
  TOOLKIT_CACHE,
  TOOLKIT_ENTRIES,
} from '../../infra/build-cache.mjs';

const work = mkdtempSync(join(tmpdir(), 'klw-build-cache-'));
after(() => rmSync(work, { recursive: true, force: true }));

/** A small project: main.ts imports dep.ts, and tells its own import.meta.url. */
function project(name: string): { root: string; cacheDir: string; options: Parameters<typeof cachedBuild>[0] } {
  const root = join(work, name);
  mkdirSync(root, { recursive: true });
  writeFileSync(
    join(root, 'main.ts'),
    "import { word } from './dep.ts';\nexport const said: string = word;\nexport const url: string = import.meta.url;\n",
  );
  writeFileSync(join(root, 'dep.ts'), "export const word: string = 'first';\n");
  const cacheDir = join(work, `${name}-cache`);
  return { root, cacheDir, options: { root, cacheDir, entryPoints: { main: 'main.ts' } } };
}

/** What the build's main.mjs exports (each build is a new file, so a new module). */
async function run(dir: string): Promise<{ said: string; url: string }> {
  return (await import(`${pathToFileURL(join(dir, 'main.mjs')).href}?${Math.random()}`)) as {
    said: string;
    url: string;
  };
}

/** A path under `base` exactly `length` characters long (folders of at most 200 characters each). */
function paddedPath(base: string, length: number): string {
  let path = base;
  while (length - path.length > 201) path = join(path, 'd'.repeat(200));
  const rest = length - path.length - 1;
  assert.ok(rest > 0, `a path of ${length} characters under ${base}`);
  return join(path, 'f'.repeat(rest));
}

/** Rewrites a source with new text and a later modification time. */
function change(file: string, text: string): void {
  writeFileSync(file, text);
  const later = new Date(Date.now() + 5000);
  utimesSync(file, later, later);
}

describe('the cached build', () => {
  it('is built once into a folder named by its content, then reused while nothing changed', async () => {
    const { root, cacheDir, options } = project('reuse');
    const first = await cachedBuild(options);
    assert.equal(first.built, true);
    assert.match(basename(first.dir), /^[0-9a-f]{16}$/);
    assert.equal(join(first.dir, '..'), cacheDir);
    const mod = await run(first.dir);
    assert.equal(mod.said, 'first');
    // A module's import.meta.url stays its source's: files it reads beside itself are found there.
    assert.equal(mod.url, pathToFileURL(join(root, 'main.ts')).href);
    assert.deepEqual(await cachedBuild(options), { dir: first.dir, built: false });
  });

  it('is reused whatever the order of its entry points', async () => {
    const { root, options } = project('order');
    writeFileSync(join(root, 'other.ts'), "export const other: string = 'other';\n");
    const first = await cachedBuild({ ...options, entryPoints: { main: 'main.ts', other: 'other.ts' } });
    assert.equal(first.built, true);
    assert.deepEqual(await cachedBuild({ ...options, entryPoints: { other: 'other.ts', main: 'main.ts' } }), {
      dir: first.dir,
      built: false,
    });
  });

  it("leaves import.meta.url the built file's when asked, in a build of its own", async () => {
    const { cacheDir, options } = project('own-urls');
    const withSources = await cachedBuild(options);
    const own = await cachedBuild({ ...options, sourceUrls: false });
    assert.equal(own.built, true, 'not the build made with source URLs');
    assert.equal(join(own.dir, '..'), cacheDir);
    assert.notEqual(own.dir, withSources.dir);
    assert.equal((await run(own.dir)).url.split('?')[0], pathToFileURL(join(own.dir, 'main.mjs')).href);
    assert.deepEqual(await cachedBuild({ ...options, sourceUrls: false }), { dir: own.dir, built: false });
  });

  it("gives each module its source's import.meta.dirname and filename, and leaves a missing import() to fail when run", async () => {
    const { root, options } = project('meta');
    writeFileSync(
      join(root, 'main.ts'),
      "export const here: string[] = [import.meta.dirname, import.meta.filename];\nexport const missing = () => import('./not-there.mjs');\n",
    );
    const { dir } = await cachedBuild(options);
    const mod = (await import(pathToFileURL(join(dir, 'main.mjs')).href)) as {
      here: string[];
      missing: () => Promise<unknown>;
    };
    assert.deepEqual(mod.here, [root, join(root, 'main.ts')]);
    // As from the source: the file beside main.ts, not beside the build.
    await assert.rejects(mod.missing(), (e: Error) => e.message.includes(join(root, 'not-there.mjs')));
  });

  it('is built again when a source changed, and runs the new code', async () => {
    const { root, options } = project('changed');
    const first = await cachedBuild(options);
    change(join(root, 'dep.ts'), "export const word: string = 'second';\n");
    const second = await cachedBuild(options);
    assert.equal(second.built, true);
    assert.notEqual(second.dir, first.dir);
    assert.equal((await run(second.dir)).said, 'second');
    assert.deepEqual(await cachedBuild(options), { dir: second.dir, built: false });
  });

  it('is built again when a source changed while it was being built', async () => {
    const { root, options } = project('during');
    const dep = join(root, 'dep.ts');
    const first = await cachedBuild({
      ...options,
      afterBuild: () => writeFileSync(dep, "export const word: string = 'during';\n"),
    });
    assert.equal((await run(first.dir)).said, 'first');
    const second = await cachedBuild(options);
    assert.equal(second.built, true);
    assert.equal((await run(second.dir)).said, 'during');
  });

  it('is built again after an edit of the same size within one tick of the file time', async () => {
    const { root, options } = project('same-tick');
    const dep = join(root, 'dep.ts');
    change(dep, "export const word: string = 'sameA';\n");
    const first = await cachedBuild(options);
    assert.equal((await run(first.dir)).said, 'sameA');
    const { size, mtime } = statSync(dep);
    writeFileSync(dep, "export const word: string = 'sameB';\n");
    utimesSync(dep, mtime, mtime);
    assert.equal(statSync(dep).size, size);
    const second = await cachedBuild(options);
    assert.equal(second.built, true);
    assert.equal((await run(second.dir)).said, 'sameB');
    assert.deepEqual(await cachedBuild(options), { dir: second.dir, built: false });
  });

  it('is built again when a source it read is gone', async () => {
    const { root, options } = project('gone');
    await cachedBuild(options);
    rmSync(join(root, 'dep.ts'));
    await assert.rejects(cachedBuild(options), /dep\.ts/);
  });

  it('rebuilds, never trusts, a planted link in place of a built file or folder', async () => {
    const { cacheDir, options } = project('links');
    const { dir } = await cachedBuild(options);
    // A link to a copy with the very same content, the link's own size (its target's length)
    // the file's: only what it is gives it away.
    const content = readFileSync(join(dir, 'main.mjs'));
    const copy = paddedPath(join(work, 'links-copy'), content.length);
    mkdirSync(join(copy, '..'), { recursive: true });
    writeFileSync(copy, content);
    rmSync(join(dir, 'main.mjs'));
    symlinkSync(copy, join(dir, 'main.mjs'));
    assert.equal(lstatSync(join(dir, 'main.mjs')).size, content.length);
    const again = await cachedBuild(options);
    assert.deepEqual(again, { dir, built: true });
    assert.ok(lstatSync(join(dir, 'main.mjs')).isFile());
    assert.equal((await run(dir)).said, 'first');
    // The build's folder itself a link to a copy of it.
    const elsewhere = join(work, 'links-elsewhere');
    mkdirSync(elsewhere);
    for (const name of readdirSync(dir)) writeFileSync(join(elsewhere, name), readFileSync(join(dir, name)));
    rmSync(dir, { recursive: true });
    symlinkSync(elsewhere, dir);
    assert.deepEqual(await cachedBuild(options), { dir, built: true });
    assert.ok(lstatSync(dir).isDirectory());
    // The manifest a link to a good manifest.
    const manifest = join(cacheDir, 'current.json');
    writeFileSync(join(work, 'links-manifest.json'), readFileSync(manifest));
    rmSync(manifest);
    symlinkSync(join(work, 'links-manifest.json'), manifest);
    assert.deepEqual(await cachedBuild(options), { dir, built: true });
    assert.ok(lstatSync(manifest).isFile());
    assert.deepEqual(await cachedBuild(options), { dir, built: false });
  });

  it('rebuilds a corrupt build or manifest', async () => {
    const { cacheDir, options } = project('corrupt');
    const { dir } = await cachedBuild(options);
    const main = join(dir, 'main.mjs');
    const good = readFileSync(main);
    // Checked once in this process (its hashes then kept), then changed: checked again.
    assert.deepEqual(await cachedBuild(options), { dir, built: false });
    // The same size, one byte changed: its hash gives it away.
    const bad = Buffer.from(good);
    bad[bad.indexOf('first')] = 'F'.charCodeAt(0);
    writeFileSync(main, bad);
    assert.deepEqual(await cachedBuild(options), { dir, built: true });
    assert.deepEqual(readFileSync(main), good);
    // Cut short.
    writeFileSync(main, good.subarray(0, 10));
    assert.deepEqual(await cachedBuild(options), { dir, built: true });
    assert.deepEqual(readFileSync(main), good);
    // A source map cut short.
    writeFileSync(`${main}.map`, '{');
    assert.deepEqual(await cachedBuild(options), { dir, built: true });
    // The manifest not JSON, or JSON of another shape, or naming a folder outside the cache.
    const manifest = join(cacheDir, 'current.json');
    const text = readFileSync(manifest, 'utf8');
    for (const broken of ['{', 'null', '[]', text.replace(basename(dir), '../../../../tmp')]) {
      writeFileSync(manifest, broken);
      assert.deepEqual(await cachedBuild(options), { dir, built: true }, broken.slice(0, 40));
    }
    // The cache folder itself a file.
    rmSync(cacheDir, { recursive: true });
    writeFileSync(cacheDir, 'not a folder');
    assert.deepEqual(await cachedBuild(options), { dir, built: true });
    assert.deepEqual(await cachedBuild(options), { dir, built: false });
  });

  it('trusts files an earlier check hashed while their states are unchanged, and sees an edit that kept size and time', async () => {
    const { options } = project('verified');
    const { dir } = await cachedBuild(options);
    const main = join(dir, 'main.mjs');
    // A whole second, which a file time keeps exactly: put back below, it reads the same.
    const mtime = new Date(Math.floor(Date.now() / 1000) * 1000 - 10_000);
    utimesSync(main, mtime, mtime);
    const record = join(dir, '.verified.json');
    // Files changed within RACY_MS of the check are never recorded: the same tick may follow.
    assert.deepEqual(await cachedBuild(options), { dir, built: false });
    assert.equal(existsSync(record), false, 'no record of files just written');
    // Seen from later on, the files are old enough: this check hashes them and records their states.
    assert.deepEqual(await cachedBuild({ ...options, now: () => Date.now() + 60_000 }), { dir, built: false });
    assert.match(readFileSync(record, 'utf8'), /main\.mjs/);
    // Another process (which has not hashed them itself) trusts the record.
    const script = `const { cachedBuild } = await import(${JSON.stringify(pathToFileURL(join(TOOLKIT, 'infra', 'build-cache.mjs')).href)});
      process.stdout.write(JSON.stringify(await cachedBuild(${JSON.stringify(options)})));`;
    const inChild = async () =>
      JSON.parse((await promisify(execFile)(process.execPath, ['--input-type=module', '-e', script])).stdout) as {
        dir: string;
        built: boolean;
      };
    assert.deepEqual(await inChild(), { dir, built: false });
    // One byte changed, size and modification time put back: its change time gives it away.
    const good = readFileSync(main);
    const bad = Buffer.from(good);
    bad[bad.indexOf('first')] = 'F'.charCodeAt(0);
    writeFileSync(main, bad);
    utimesSync(main, mtime, mtime);
    assert.equal(statSync(main).mtimeMs, mtime.getTime());
    assert.deepEqual(await inChild(), { dir, built: true });
    assert.deepEqual(readFileSync(main), good);
    // In this process too, which had hashed the files before.
    writeFileSync(main, bad);
    utimesSync(main, mtime, mtime);
    assert.deepEqual(await cachedBuild(options), { dir, built: true });
    assert.deepEqual(readFileSync(main), good);
    // A record planted as a link is not read, and is replaced by a file.
    rmSync(record, { force: true });
    writeFileSync(join(work, 'verified-elsewhere.json'), 'anything');
    symlinkSync(join(work, 'verified-elsewhere.json'), record);
    assert.deepEqual(await cachedBuild({ ...options, now: () => Date.now() + 60_000 }), { dir, built: false });
    assert.ok(lstatSync(record).isFile());
    assert.equal(readFileSync(join(work, 'verified-elsewhere.json'), 'utf8'), 'anything');
  });

  it('stands a module requiring the very esbuild package in for its import, and records its package.json', async () => {
    const { root, cacheDir, options } = project('esbuild');
    // A copy of the package of its own (the toolkit's own package.json is an input of every build).
    const own = join(root, 'node_modules', 'esbuild');
    mkdirSync(join(own, 'lib'), { recursive: true });
    for (const file of ['package.json', join('lib', 'main.js')])
      writeFileSync(join(own, file), readFileSync(join(TOOLKIT, 'node_modules', 'esbuild', file)));
    writeFileSync(
      join(root, 'main.ts'),
      "import * as all from 'esbuild';\nimport esbuild from 'esbuild';\nimport { createRequire } from 'node:module';\n" +
        'export const names: string[] = Object.keys(all);\nexport const version: string = all.version;\n' +
        "export const same: boolean = esbuild === createRequire(import.meta.url)('esbuild') && all.build === esbuild.build;\n",
    );
    const { dir } = await cachedBuild(options);
    const mod = (await import(pathToFileURL(join(dir, 'main.mjs')).href)) as {
      names: string[];
      version: string;
      same: boolean;
    };
    const real = createRequire(join(root, 'main.ts'))('esbuild') as Record<string, unknown>;
    assert.equal(mod.same, true);
    assert.equal(mod.version, real.version);
    // `default` is the package's exports object, as Node's import of a CommonJS package makes it.
    const named = (keys: string[]) => keys.filter((n) => n !== 'default').sort();
    assert.deepEqual(named(mod.names), named(Object.keys(real)));
    // Node never imports the package itself (which would scan its source for these names first).
    for (const file of readdirSync(dir).filter((f) => f.endsWith('.mjs')))
      assert.doesNotMatch(readFileSync(join(dir, file), 'utf8'), /from\s*["']esbuild["']/, file);
    const manifest = JSON.parse(readFileSync(join(cacheDir, 'current.json'), 'utf8')) as { inputs: string[][] };
    assert.ok(
      manifest.inputs.some(([path]) => path === join('node_modules', 'esbuild', 'package.json')),
      'its package.json is an input',
    );
  });

  it('serves concurrent first runs, in one process and in several, with one intact build', async () => {
    const { cacheDir, options } = project('concurrent');
    const [a, b] = await Promise.all([cachedBuild(options), cachedBuild(options)]);
    assert.equal(a.dir, b.dir);
    rmSync(cacheDir, { recursive: true });
    const script = `const { cachedBuild } = await import(${JSON.stringify(pathToFileURL(join(TOOLKIT, 'infra', 'build-cache.mjs')).href)});
      process.stdout.write((await cachedBuild(${JSON.stringify(options)})).dir);`;
    const runs = await Promise.all(
      [1, 2, 3].map(() => promisify(execFile)(process.execPath, ['--input-type=module', '-e', script])),
    );
    assert.deepEqual(
      runs.map((r) => r.stdout),
      [a.dir, a.dir, a.dir],
    );
    assert.deepEqual(await cachedBuild(options), { dir: a.dir, built: false });
    assert.deepEqual(
      readdirSync(cacheDir).filter((n) => n.startsWith('draft-') || n.endsWith('.tmp')),
      [],
      'no draft left behind',
    );
  });

  it("is the toolkit's own: klw's command line and the Serverless plugin, and apart the loader's child, in node_modules/.cache", async () => {
    assert.deepEqual(Object.keys(TOOLKIT_ENTRIES).sort(), ['cli', 'plugin']);
    assert.equal(TOOLKIT_CACHE, join(TOOLKIT, 'node_modules', '.cache', 'klw'));
    const { dir } = await cachedBuild();
    for (const name of ['cli.mjs', 'plugin.mjs']) assert.ok(existsSync(join(dir, name)), name);
    assert.deepEqual(Object.keys(LOADER_ENTRIES), ['child']);
    assert.equal(LOADER_CACHE, join(TOOLKIT, 'node_modules', '.cache', 'klw-loader'));
    const out = await promisify(execFile)(process.execPath, [join(TOOLKIT, 'infra', 'bin', 'klw.mjs'), '--version']);
    assert.equal(out.stdout.trim(), JSON.parse(readFileSync(join(TOOLKIT, 'package.json'), 'utf8')).version);
  });
});
