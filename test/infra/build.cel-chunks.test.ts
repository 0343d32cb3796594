// The RE2 engine is a chunk of its own in a function's bundle: loaded only when a condition uses a
// regular expression, and carried by the deployed zip and the emulator's build alike.
// klw-test: no-tsx (what it imports at run time is the JavaScript it built)
import assert from 'node:assert/strict';
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { Agent, request as httpsRequest } from 'node:https';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { after, describe, it } from 'node:test';
import { buildFunction, bundlePath } from '../../infra/build.ts';
import { startApi } from '../../infra/local/api.ts';
import { toEvent } from '../../lib/testing/index.ts';
import { ManualTimer } from '../helpers.ts';
import { extractZip, readZip } from '../zip.ts';
import { withKeptCertificates } from '../kept-certs.ts';
import { CONDITION_GATE, POD_POLICY, podReview, scratchProjects } from './scratch-projects.ts';
import { buildsOncePerFile } from '../kept-builds.ts';

// What these tests check is the build itself: made every run, never a kept one; the emulator
// builds the functions the tests built already, and reuses those builds.
buildsOncePerFile();

/** Functions enforcing their conditions, which let only pods named `web-<n>` reach `validate`. */
const functions = {
  'regex-gate': "object.metadata.name.matches('^web-[0-9]+$')",
  'plain-gate': "object.metadata.name.startsWith('web-')",
};
const work = scratchProjects()({
  ...Object.fromEntries(
    Object.entries(functions).map(([name, expression]) => [name, CONDITION_GATE(name, expression)]),
  ),
  // A validating policy served as a webhook whose validation uses a regular expression.
  'regex-policy': POD_POLICY('regex-policy', "object.metadata.name.matches('^web-[0-9]+$')", 'not a web pod'),
});
// The unpacked zip goes where no node_modules is reachable: only what the zip carries can load.
const unpacked = mkdtempSync(join(tmpdir(), 'klw-cel-chunks-'));
after(() => rmSync(unpacked, { recursive: true, force: true }));

/** A string only RE2's code holds (its syntax errors, in Go's words). */
const RE2_MARKER = 'error parsing regexp';

describe('the RE2 chunk', () => {
  it('is left out of the bundle every function loads, and carried beside it and in the zip', async () => {
    for (const name of Object.keys(functions)) {
      const built = await buildFunction(work, { name, entry: join(work, 'functions', name, 'index.ts') });
      const index = readFileSync(bundlePath(work, name), 'utf8');
      assert.ok(!index.includes(RE2_MARKER), `${name}: index.mjs holds RE2`);
      const chunks = join(dirname(bundlePath(work, name)), 'chunks');
      const re2 = readdirSync(chunks).filter(
        (f) => f.endsWith('.mjs') && readFileSync(join(chunks, f), 'utf8').includes(RE2_MARKER),
      );
      assert.equal(re2.length, 1, `${name}: one chunk holds RE2`);
      const listing = readZip(join(work, built.zip)).map((e) => e.name);
      assert.ok(listing.includes(`chunks/${re2[0]}`), `${name}: the zip lacks chunks/${re2[0]}`);
    }
  });

  it('loads from the unpacked zip when a condition uses a regular expression', async () => {
    extractZip(join(work, 'dist/functions/regex-gate.zip'), unpacked);
    process.env.KLW_LOG_LEVEL = 'silent';
    const mod = await import(pathToFileURL(join(unpacked, 'index.mjs')).href);
    delete process.env.KLW_LOG_LEVEL;
    const ran = JSON.parse((await mod.handler(toEvent(podReview('web-1')))).body);
    assert.equal(ran.response.allowed, false);
    assert.equal(ran.response.status.message, 'frozen');
    const skipped = JSON.parse((await mod.handler(toEvent(podReview('db-1')))).body);
    assert.equal(skipped.response.allowed, true);
  });

  it('loads from the unpacked zip of a policy whose validation uses a regular expression', async () => {
    const name = 'regex-policy';
    const built = await buildFunction(work, { name, entry: join(work, 'functions', name, 'index.ts') });
    const dir = join(unpacked, name);
    extractZip(join(work, built.zip), dir);
    process.env.KLW_LOG_LEVEL = 'silent';
    process.env.AWS_LAMBDA_FUNCTION_NAME = name;
    try {
      const mod = await import(pathToFileURL(join(dir, 'index.mjs')).href);
      const denied = JSON.parse((await mod.handler(toEvent(podReview('db-1')))).body);
      assert.equal(denied.response.allowed, false, JSON.stringify(denied.response));
      assert.match(denied.response.status.message, /not a web pod/);
      const allowed = JSON.parse((await mod.handler(toEvent(podReview('web-1')))).body);
      assert.equal(allowed.response.allowed, true, JSON.stringify(allowed.response));
    } finally {
      delete process.env.KLW_LOG_LEVEL;
      delete process.env.AWS_LAMBDA_FUNCTION_NAME;
    }
  });

  it('loads in the emulator', async () => {
    const api = await startApi({
      root: work,
      port: 0,
      stateDir: await withKeptCertificates(join(work, '.state')),
      log: () => {},
      functionLog: () => {},
      concurrency: 1,
      invocationTimer: new ManualTimer().timer,
    });
    try {
      const answer = (name: string) =>
        new Promise<any>((resolve, reject) => {
          const req = httpsRequest(
            `${api.url}/regex-gate`,
            {
              method: 'POST',
              headers: { 'content-type': 'application/json' },
              agent: new Agent({ ca: readFileSync(api.caPath), keepAlive: false }),
            },
            (res) => {
              const body: Buffer[] = [];
              res.on('data', (c: Buffer) => body.push(c));
              res.on('end', () => resolve(JSON.parse(Buffer.concat(body).toString('utf8'))));
            },
          );
          req.on('error', reject);
          req.end(JSON.stringify(podReview(name)));
        });
      const ran = await answer('web-2');
      assert.equal(ran.response.allowed, false);
      assert.equal(ran.response.status.message, 'frozen');
      assert.equal((await answer('db-2')).response.allowed, true);
    } finally {
      await api.close();
    }
  });
});
