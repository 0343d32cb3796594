// The handler's stages: one authentication stage decides an immutable caller for every kind of
// authentication; answers that cannot be sent are handled once, for any engine; the fleet code
// lives in lib/handler/fleet.ts and the handler never reaches up into the engines.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { describe, it } from 'node:test';
import { authenticate } from '../../../lib/auth.ts';
import { allow, defineValidatingWebhook } from '../../../lib/index.ts';
import { lambdaContext } from '../../../lib/harness/events.ts';
import { admissionReview, toEvent } from '../../../lib/testing/index.ts';
import { completeAdmissionRegistration } from '../../../lib/registration.ts';
import type { AdmissionReview } from '../../../lib/review/schemas.ts';
import { parseAdmissionReview } from '../../../lib/review/parse.ts';
import {
  createHandler,
  type Caller,
  type EngineAnswer,
  type ReviewEngine,
  type RunContext,
  type UnsendableAnswer,
  type WebhookContext,
} from '../../../lib/webhook.ts';
import { relativeImports, sources } from '../../repo/imports.ts';
import { captureLogger } from '../../helpers.ts';
import { createLogger } from '../../../lib/log.ts';

const silent = createLogger({ level: 'silent' });

const SECRET = 's'.repeat(43);
const EAST = 'e'.repeat(43);
const TOKEN = 'a-token';
const pod = admissionReview({ apiVersion: 'v1', kind: 'Pod', metadata: { name: 'p' } });

/** A validating webhook that records the context its function is given. */
function recording(auth: 'auto' | 'none' = 'auto') {
  const seen: WebhookContext[] = [];
  const webhook = defineValidatingWebhook({
    name: 'pod-policy',
    rules: [],
    auth,
    validate: (_request, ctx) => {
      seen.push(ctx);
      return allow();
    },
  });
  return { webhook, seen };
}

describe('the authentication stage', () => {
  const reg = completeAdmissionRegistration('validating', { name: 'pod-policy', rules: [] });
  const req = (path: string, authorization?: string) => ({
    path,
    headers: authorization ? { authorization } : ({} as Record<string, string>),
  });

  it('names how the caller proved who it is, the same frozen caller for every request', async () => {
    const bySecret = await authenticate(reg, req(`/pod-policy/${SECRET}`), { KLW_PATH_SECRET: SECRET });
    assert.deepEqual(bySecret.caller, { identity: 'path-secret' });
    const byToken = await authenticate(reg, req('/pod-policy', `Bearer ${TOKEN}`), { KLW_BEARER_TOKEN: TOKEN });
    assert.deepEqual(byToken.caller, { identity: 'bearer' });
    const open = await authenticate({ ...reg, auth: 'none' }, req('/pod-policy'), {});
    assert.deepEqual(open.caller, { identity: 'none' });
    for (const outcome of [bySecret, byToken, open]) {
      assert.equal(outcome.refusal, undefined);
      assert.ok(Object.isFrozen(outcome.caller));
    }
    const again = await authenticate(reg, req(`/pod-policy/${SECRET}`), { KLW_PATH_SECRET: SECRET });
    assert.equal(again.caller, bySecret.caller);
  });

  it('refuses with a reply and no caller', async () => {
    const wrong = await authenticate(reg, req('/pod-policy/x'.padEnd(40, 'x')), { KLW_PATH_SECRET: SECRET });
    assert.equal(wrong.caller, undefined);
    assert.equal(wrong.refusal?.reply.statusCode, 404);
    const badToken = await authenticate(reg, req('/pod-policy', 'Bearer nope'), { KLW_BEARER_TOKEN: TOKEN });
    assert.equal(badToken.refusal?.reply.statusCode, 401);
    const broken = await authenticate(reg, req('/pod-policy'), { KLW_PATH_SECRET: 'short' });
    assert.equal(broken.refusal?.reply.statusCode, 500);
  });

  it('gives the user function the fleet cluster, its version and enforcement, and nothing without a fleet', async () => {
    const env = {
      KLW_FLEET: JSON.stringify({ east: { enforcement: 'Warn', kubeVersion: '1.29' } }),
      KLW_FLEET_PATH_SECRETS: JSON.stringify({ east: EAST }),
    };
    const fleet = recording();
    await fleet.webhook.withOptions({ env, logger: silent })(
      toEvent(pod, { path: `/pod-policy/${EAST}` }),
      lambdaContext(),
    );
    assert.deepEqual(
      [fleet.seen[0]?.cluster, fleet.seen[0]?.kubeVersion, fleet.seen[0]?.enforcement],
      ['east', '1.29', 'Warn'],
    );
    const single = recording();
    await single.webhook.withOptions({ env: { KLW_PATH_SECRET: SECRET }, logger: silent })(
      toEvent(pod, { path: `/pod-policy/${SECRET}` }),
      lambdaContext(),
    );
    assert.equal(single.seen.length, 1);
    assert.deepEqual(
      [single.seen[0]?.cluster, single.seen[0]?.kubeVersion, single.seen[0]?.enforcement],
      [undefined, undefined, undefined],
    );
  });

  it('reads the one environment it is given: a secret in process.env is not the handler options one', async () => {
    const before = process.env.KLW_PATH_SECRET;
    process.env.KLW_PATH_SECRET = SECRET;
    try {
      const { webhook } = recording();
      const other = 'o'.repeat(43);
      const handler = webhook.withOptions({ env: { KLW_PATH_SECRET: other }, logger: silent });
      assert.equal((await handler(toEvent(pod, { path: `/pod-policy/${SECRET}` }), lambdaContext())).statusCode, 404);
      assert.equal((await handler(toEvent(pod, { path: `/pod-policy/${other}` }), lambdaContext())).statusCode, 200);
    } finally {
      if (before === undefined) delete process.env.KLW_PATH_SECRET;
      else process.env.KLW_PATH_SECRET = before;
    }
  });
});

describe('answers that cannot be sent', () => {
  const registration = completeAdmissionRegistration('validating', { name: 'any-engine', rules: [] });

  /** An engine answering `body`, recording what the handler tells it about an answer it cannot send. */
  function engine(body: () => object) {
    const told: UnsendableAnswer[] = [];
    const contexts: RunContext[] = [];
    const fake: ReviewEngine<AdmissionReview> = {
      parse: parseAdmissionReview,
      run: async (_review, ctx): Promise<EngineAnswer> => {
        contexts.push(ctx);
        return { body: body(), fields: { from: 'run' }, failure: 'timeout' };
      },
      unsendable: (_review, why) => {
        told.push(why);
        return { body: { replaced: why.kind }, fields: { from: 'unsendable' } };
      },
    };
    return { fake, told, contexts };
  }

  async function send(fake: ReviewEngine<AdmissionReview>, maxBodyBytes?: number) {
    const { logger, lines } = captureLogger();
    const handler = createHandler(registration, fake, { env: {}, logger, ...(maxBodyBytes ? { maxBodyBytes } : {}) });
    const result = await handler(toEvent(pod, { path: '/any-engine' }), lambdaContext());
    return { result, line: lines.find((l) => l.msg === 'review') };
  }

  it('tells the engine an answer is not JSON, with the error and the answer, and sends its replacement', async () => {
    const cyclic: Record<string, unknown> = {};
    cyclic.self = cyclic;
    const { fake, told } = engine(() => cyclic);
    const { result, line } = await send(fake);
    assert.equal(told.length, 1);
    assert.equal(told[0]?.kind, 'unserializable');
    assert.ok(told[0]?.kind === 'unserializable' && told[0].error instanceof TypeError && told[0].body === cyclic);
    assert.deepEqual(JSON.parse(result.body), { replaced: 'unserializable' });
    assert.equal(line?.from, 'unsendable');
    // The run's failure stands when the replacement names none.
    assert.equal(line?.TimedOut, 1);
  });

  it('tells the engine how large the result was when Lambda could not return it', async () => {
    const { fake, told } = engine(() => ({ text: 'x'.repeat(20_000) }));
    const { result } = await send(fake, 10_000);
    assert.equal(told.length, 1);
    assert.ok(told[0]?.kind === 'oversized' && told[0].bytes > 20_000);
    assert.deepEqual(JSON.parse(result.body), { replaced: 'oversized' });
  });

  it('sends an answer that fits as it is, and gives the engine a read-only caller', async () => {
    const { fake, told, contexts } = engine(() => ({ ok: true }));
    const { result } = await send(fake);
    assert.deepEqual(told, []);
    assert.deepEqual(JSON.parse(result.body), { ok: true });
    const caller: Caller = contexts[0]!.caller;
    assert.deepEqual(caller, { identity: 'none' });
    assert.ok(Object.isFrozen(caller));
  });
});

describe('where the fleet code lives', () => {
  const lib = sources('lib');

  it('only lib/handler/fleet.ts reads the fleet variables', () => {
    const readers = lib.filter(
      (f) =>
        f !== 'lib/handler/fleet.ts' &&
        /KLW_FLEET|FLEET_ENV/.test(readFileSync(f, 'utf8').replace(/^\s*(\/?\*|\/\/).*$/gm, '')),
    );
    // lib/admission/enforcement.ts names the variable only as the source of an enforcement.
    assert.deepEqual(readers, ['lib/admission/enforcement.ts']);
  });

  it('the handler never imports the engines (admission, conversion) above it', () => {
    const upward = lib
      .filter((f) => f.startsWith('lib/handler/') || f === 'lib/auth.ts' || f === 'lib/metrics.ts')
      .flatMap((f) => relativeImports(f, readFileSync(f, 'utf8')).map((t) => `${f} -> ${t}`))
      .filter((arrow) => /-> lib\/(admission|conversion|policies)\//.test(arrow));
    assert.deepEqual(upward, []);
  });
});
