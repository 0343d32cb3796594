// What `klw manifests` runs, called as its action calls it: the endpoints it is given are checked
// before anything is loaded.
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import { type ManifestsOptions, writeManifests } from '../../../infra/commands/manifests-action.ts';
import { KlwError } from '../../../infra/errors.ts';

const dir = mkdtempSync(join(tmpdir(), 'klw-manifests-action-'));
after(() => rmSync(dir, { recursive: true, force: true }));

const context = {
  root: () => dir,
  say: () => {},
  runServerless: async () => ({ code: 0, stdout: '', stderr: '' }),
};
const options = (endpoints: Partial<ManifestsOptions>) =>
  ({ name: 'kube-lambda-webhooks', format: 'yaml', pathSecret: 'placeholder', ...endpoints }) as ManifestsOptions;

describe('klw manifests, its action', () => {
  it('takes exactly one of --base-url and --function-urls', async () => {
    for (const endpoints of [{}, { baseUrl: 'https://h.example.com', functionUrls: join(dir, 'urls.json') }]) {
      await assert.rejects(
        writeManifests(context, options(endpoints)),
        (err: unknown) =>
          err instanceof KlwError && err.message === 'give exactly one of --base-url or --function-urls',
      );
    }
  });

  it('says where functions go in a project without any', async () => {
    await assert.rejects(
      writeManifests(context, options({ baseUrl: 'https://h.example.com' })),
      (err: unknown) => err instanceof KlwError && err.message.includes(join(dir, 'functions')),
    );
  });
});
