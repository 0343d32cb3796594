// An emulator that cannot listen (its port taken: EADDRINUSE) leaves nothing behind that keeps
// the process alive: the secret watchers it opened are closed, and so are the functions.
import assert from 'node:assert/strict';
import { rmSync } from 'node:fs';
import { createServer, type Server } from 'node:net';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import { startApi } from '../../../infra/local/api.ts';
import { withKeptCertificates } from '../../kept-certs.ts';
import { ManualTimer, projectInRepository } from '../../helpers.ts';

const work = projectInRepository('.klw-test-local-listen-', {
  guarded: `import { allow, defineValidatingWebhook } from 'kube-lambda-webhooks';
export default defineValidatingWebhook({
  name: 'guarded',
  rules: [{ operations: ['CREATE'], apiGroups: [''], apiVersions: ['v1'], resources: ['pods'] }],
  validate: () => allow(),
});
`,
});
let taken: Server | undefined;
after(async () => {
  await new Promise<void>((resolve) => (taken ? taken.close(() => resolve()) : resolve()));
  rmSync(work, { recursive: true, force: true });
});

describe('klw local start-api on a port already in use', () => {
  it('fails with EADDRINUSE and closes the watchers it opened', async () => {
    taken = createServer();
    await new Promise<void>((resolve) => taken!.listen(0, '127.0.0.1', resolve));
    const { port } = taken.address() as { port: number };
    const watchers = { opened: 0, closed: 0 };
    await assert.rejects(
      startApi({
        root: work,
        port,
        stateDir: await withKeptCertificates(join(work, '.state')),
        log: () => {},
        functionLog: () => {},
        concurrency: 1,
        invocationTimer: new ManualTimer().timer,
        watchSecrets: () => {
          watchers.opened++;
          return { close: () => void watchers.closed++ };
        },
      }),
      (err: NodeJS.ErrnoException) => err.code === 'EADDRINUSE',
    );
    assert.deepEqual(watchers, { opened: 1, closed: 1 });
  });
});
