// What `klw deploy` runs, called as its action calls it: a project without functions stops it
// before anything is built or any AWS call or Serverless run is made.
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import { deploy } from '../../../infra/commands/deploy-action.ts';
import { KlwError } from '../../../infra/errors.ts';

const dir = mkdtempSync(join(tmpdir(), 'klw-deploy-action-'));
after(() => rmSync(dir, { recursive: true, force: true }));

describe('klw deploy, its action', () => {
  it('says where functions go in a project without any, and runs nothing', async () => {
    const ran: string[][] = [];
    const said: string[] = [];
    const context = {
      root: () => dir,
      say: (line: string) => said.push(line),
      runServerless: async (_root: string, args: string[]) => {
        ran.push(args);
        return { code: 0, stdout: '', stderr: '' };
      },
    };
    await assert.rejects(
      deploy(context, { stage: 'dev', out: 'dist/manifests.yaml', outDir: 'dist/clusters' }),
      (err: unknown) => err instanceof KlwError && err.message.includes(join(dir, 'functions')),
    );
    assert.deepEqual(ran, []);
    assert.deepEqual(said, []);
  });
});
