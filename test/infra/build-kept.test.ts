// Kept function builds: reused only for the same build of the same files, wherever the project is,
// rebuilt when a file it read changed or a kept file is damaged, never kept when the build fails,
// and off without the variable; their zips likewise kept by the files they hold.
import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, readdirSync, rmSync, utimesSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, beforeEach, describe, it } from 'node:test';
import type { BuildResult } from 'esbuild';
import { KEPT_BUILDS_ENV, keptBuild, keptZip } from '../../infra/build-kept.ts';

const scratch = mkdtempSync(join(tmpdir(), 'klw-kept-builds-'));
const before = process.env[KEPT_BUILDS_ENV];
after(() => {
  if (before === undefined) delete process.env[KEPT_BUILDS_ENV];
  else process.env[KEPT_BUILDS_ENV] = before;
  rmSync(scratch, { recursive: true, force: true });
});

let kept = '';
let count = 0;
beforeEach(() => {
  kept = join(scratch, `kept-${count++}`);
  process.env[KEPT_BUILDS_ENV] = kept;
});

/** A project folder holding `source` as src.ts. */
function project(source: string): string {
  const root = join(scratch, `project-${count++}`);
  mkdirSync(root, { recursive: true });
  writeFileSync(join(root, 'src.ts'), source);
  return root;
}

const options = (root: string, minify = true) => ({ absWorkingDir: root, outdir: join(root, 'dist'), minify });

/** A build that reads src.ts and writes index.mjs holding `text`, counting its runs. */
function fakeBuild(text: string) {
  const build = async () => {
    build.runs++;
    return {
      outputFiles: [{ path: join(build.outdir, 'index.mjs'), contents: new TextEncoder().encode(text) }],
      metafile: { inputs: { 'src.ts': { bytes: 1, imports: [] } }, outputs: {} },
    } as unknown as BuildResult;
  };
  build.runs = 0;
  build.outdir = '';
  return build;
}

/** keptBuild of `root` with `build`, as text by path. */
async function run(root: string, build: ReturnType<typeof fakeBuild>, minify = true) {
  build.outdir = join(root, 'dist');
  const files = await keptBuild(options(root, minify), build);
  return Object.fromEntries(files.map((f) => [f.path, new TextDecoder().decode(f.contents)]));
}

describe('kept builds', () => {
  it('build every time without the variable', async () => {
    delete process.env[KEPT_BUILDS_ENV];
    const root = project('a');
    const build = fakeBuild('A');
    await run(root, build);
    await run(root, build);
    assert.equal(build.runs, 2);
  });

  it('reuse the same build of the same files, in the folder of the project building', async () => {
    const build = fakeBuild('A');
    const first = project('a');
    assert.deepEqual(await run(first, build), { [join(first, 'dist', 'index.mjs')]: 'A' });
    const elsewhere = project('a');
    assert.deepEqual(await run(elsewhere, build), { [join(elsewhere, 'dist', 'index.mjs')]: 'A' });
    assert.equal(build.runs, 1);
  });

  it('build again when a file it read changed, keeping both', async () => {
    const root = project('a');
    await run(root, fakeBuild('A'));
    writeFileSync(join(root, 'src.ts'), 'b');
    const changed = fakeBuild('B');
    assert.deepEqual(Object.values(await run(root, changed)), ['B']);
    assert.equal(changed.runs, 1);
    writeFileSync(join(root, 'src.ts'), 'a');
    const restored = fakeBuild('unused');
    assert.deepEqual(Object.values(await run(root, restored)), ['A']);
    assert.equal(restored.runs, 0);
  });

  it('build again for other options', async () => {
    const root = project('a');
    await run(root, fakeBuild('A'));
    const other = fakeBuild('A, not minified');
    assert.deepEqual(Object.values(await run(root, other, false)), ['A, not minified']);
    assert.equal(other.runs, 1);
  });

  it('build again when a kept file is damaged', async () => {
    const root = project('a');
    await run(root, fakeBuild('A'));
    const [name] = readdirSync(kept);
    const [variant] = readdirSync(join(kept, name!));
    writeFileSync(join(kept, name!, variant!, 'out', 'index.mjs'), 'tampered');
    const again = fakeBuild('A');
    assert.deepEqual(Object.values(await run(root, again)), ['A']);
    assert.equal(again.runs, 1);
  });

  it('keep nothing of a build that fails', async () => {
    const root = project('a');
    const failing = async (): Promise<BuildResult> => {
      throw new Error('does not build');
    };
    await assert.rejects(keptBuild(options(root), failing), /does not build/);
    assert.deepEqual(readdirSync(scratch).includes(kept.split('/').pop()!) ? readdirSync(kept) : [], []);
    const build = fakeBuild('A');
    await run(root, build);
    assert.equal(build.runs, 1);
  });

  it('remove builds unused for a day when keeping another, and keep a used one', async () => {
    const root = project('a');
    await run(root, fakeBuild('A'));
    await run(root, fakeBuild('A'), false);
    const variantOf = (minified: string) => readdirSync(join(kept, minified))[0]!;
    const [one, two] = readdirSync(kept);
    const longAgo = new Date(Date.now() - 2 * 24 * 60 * 60 * 1000);
    for (const name of [one!, two!]) utimesSync(join(kept, name, variantOf(name)), longAgo, longAgo);
    // The minified build used now counts as used; the other is removed when a third is kept.
    await run(root, fakeBuild('A'));
    await run(project('c'), fakeBuild('C'));
    assert.equal(readdirSync(kept).length, 1);
    const again = fakeBuild('A');
    await run(root, again);
    assert.equal(again.runs, 0, 'the used build is still kept');
    const other = fakeBuild('A, not minified');
    await run(root, other, false);
    assert.equal(other.runs, 1, 'the unused build was removed');
  });
});

describe('kept zips', () => {
  /** Output files under `outdir` holding `texts` by name. */
  const outputs = (outdir: string, texts: Record<string, string>) =>
    Object.entries(texts).map(([name, text]) => ({
      path: join(outdir, name),
      contents: new TextEncoder().encode(text),
    }));
  /** A zip maker that returns `bytes`, counting its runs. */
  function fakeZip(bytes: string) {
    const make = async () => {
      make.runs++;
      return Buffer.from(bytes);
    };
    make.runs = 0;
    return make;
  }
  const files = { 'index.mjs': 'A', 'chunks/c.mjs': 'C' };

  it('are made every time without the variable', async () => {
    delete process.env[KEPT_BUILDS_ENV];
    const make = fakeZip('zip of A');
    for (let i = 0; i < 2; i++) await keptZip(outputs('/a/dist', files), '/a/dist', make);
    assert.equal(make.runs, 2);
  });

  it('are reused for the same files wherever they are, and made again for others', async () => {
    const make = fakeZip('zip of A');
    assert.equal(String(await keptZip(outputs('/a/dist', files), '/a/dist', make)), 'zip of A');
    const reused = fakeZip('unused');
    assert.equal(String(await keptZip(outputs('/b/out', files), '/b/out', reused)), 'zip of A');
    assert.equal(make.runs + reused.runs, 1);
    const changed = fakeZip('zip of B');
    const other = outputs('/a/dist', { ...files, 'index.mjs': 'B' });
    assert.equal(String(await keptZip(other, '/a/dist', changed)), 'zip of B');
    const renamed = fakeZip('zip of A renamed');
    await keptZip(outputs('/a/dist', { 'main.mjs': 'A', 'chunks/c.mjs': 'C' }), '/a/dist', renamed);
    assert.deepEqual([changed.runs, renamed.runs], [1, 1]);
  });

  it('are made again when a kept zip is damaged', async () => {
    await keptZip(outputs('/a/dist', files), '/a/dist', fakeZip('zip of A'));
    const [name] = readdirSync(kept);
    const [zip] = readdirSync(join(kept, name!));
    writeFileSync(join(kept, name!, zip!), 'tampered');
    const again = fakeZip('zip of A');
    assert.equal(String(await keptZip(outputs('/a/dist', files), '/a/dist', again)), 'zip of A');
    assert.equal(again.runs, 1);
  });
});
