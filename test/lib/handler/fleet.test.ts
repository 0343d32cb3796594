import assert from 'node:assert/strict';
import { syncBuiltinESMExports } from 'node:module';
import { describe, it, mock } from 'node:test';
import { AuthConfigError } from '../../../lib/auth.ts';
import { callerEnforcement } from '../../../lib/admission/enforcement.ts';
import {
  authenticateFleet,
  clusterDimension,
  clusterParameterName,
  fleetCaller,
  fleetFromEnv,
  fleetSecrets,
  FLEET_ENV,
  FLEET_PATH_SECRET_SSM_ENV,
  FLEET_PATH_SECRETS_ENV,
  identifyCluster,
  matchCluster,
  MAX_CLUSTERS,
  type ParameterReader,
} from '../../../lib/handler/fleet.ts';

const A1 = 'a'.repeat(43);
const A0 = 'b'.repeat(43);
const B1 = 'c'.repeat(43);
const TEMPLATE = '/kube-lambda-webhooks/svc/prod/clusters/{cluster}/path-secret';
const fleetEnv = {
  [FLEET_ENV]: JSON.stringify({ east: { enforcement: 'Deny' }, west: { enforcement: 'Warn', kubeVersion: '1.27' } }),
};

/** A fake SSM behind a cache keyed by name: counts the reads that reach it. */
function fakeSsm(values: Record<string, string | Error>): {
  read: ParameterReader;
  reads: () => number;
  set: (name: string, value: string | Error) => void;
} {
  let reads = 0;
  const cache = new Map<string, { at: number; value: string }>();
  let now = 0;
  const read: ParameterReader = async (name, maxAgeMs) => {
    now += 1;
    const hit = cache.get(name);
    if (hit && now - hit.at <= maxAgeMs) return hit.value;
    reads += 1;
    const value = values[name];
    if (value === undefined) throw new Error('ParameterNotFound');
    if (value instanceof Error) throw value;
    cache.set(name, { at: now, value });
    return value;
  };
  return { read, reads: () => reads, set: (name, value) => (values[name] = value) };
}

describe('fleet settings from the environment', () => {
  it('is undefined without KLW_FLEET, and read once per value', () => {
    assert.equal(fleetFromEnv({}), undefined);
    const fleet = fleetFromEnv(fleetEnv)!;
    assert.deepEqual(fleet.get('west'), { enforcement: 'Warn', kubeVersion: '1.27' });
    assert.equal(fleetFromEnv({ ...fleetEnv }), fleet);
  });

  it('refuses a value it cannot trust', () => {
    const bad: Array<[string, RegExp]> = [
      ['{', /not JSON/],
      ['[]', /not a JSON object/],
      ['{}', /names no cluster/],
      ['{"Bad_Name": {}}', /not a cluster name/],
      ['{"unknown": {}}', /not a cluster name/],
      ['{"a": 1}', /cluster a is not an object/],
      ['{"a": {"enforcment": "Warn"}}', /unknown setting enforcment/],
      ['{"a": {"enforcement": "warn"}}', /enforcement "warn" is not one of Deny, Warn, Audit/],
      ['{"a": {"kubeVersion": 1.3}}', /kubeVersion 1.3 is not a version/],
      [
        JSON.stringify(Object.fromEntries(Array.from({ length: MAX_CLUSTERS + 1 }, (_, i) => [`c${i}`, {}]))),
        /at most 100/,
      ],
    ];
    for (const [value, message] of bad)
      assert.throws(
        () => fleetFromEnv({ [FLEET_ENV]: value }),
        (err: Error) => err instanceof AuthConfigError && message.test(err.message),
        value,
      );
  });

  it('per-cluster enforcement wins over the environment and the registration; others fall back', () => {
    const fleet = fleetFromEnv(fleetEnv);
    const reg = { name: 'pod-policy', enforcement: 'Audit' as const };
    const west = fleetCaller('west', fleet);
    assert.deepEqual(callerEnforcement(reg, west, { KLW_ENFORCEMENT_POD_POLICY: 'Deny' }), {
      mode: 'Warn',
      source: 'KLW_FLEET (cluster west)',
    });
    assert.equal(callerEnforcement(reg, fleetCaller('east', fleet), {}).mode, 'Deny');
    const noMode = fleetFromEnv({ [FLEET_ENV]: '{"north": {}}' });
    assert.deepEqual(callerEnforcement(reg, fleetCaller('north', noMode), { KLW_ENFORCEMENT_POD_POLICY: 'Warn' }), {
      mode: 'Warn',
      source: 'KLW_ENFORCEMENT_POD_POLICY',
    });
    assert.equal(callerEnforcement(reg, {}, {}).mode, 'Audit');
  });

  it('makes one frozen caller of the matched cluster and its settings', () => {
    const fleet = fleetFromEnv(fleetEnv);
    const west = fleetCaller('west', fleet);
    assert.deepEqual(west, {
      identity: 'fleet',
      cluster: 'west',
      dimension: 'west',
      enforcement: 'Warn',
      kubeVersion: '1.27',
    });
    assert.ok(Object.isFrozen(west));
    assert.throws(() => {
      (west as { cluster?: string }).cluster = 'east';
    }, TypeError);
    assert.deepEqual(fleetCaller(undefined, fleet), { identity: 'none', dimension: 'unknown' });
    assert.deepEqual(fleetCaller(undefined, undefined), { identity: 'none', dimension: 'unknown' });
  });

  it('names a caller no cluster matched "unknown", keeping the dimension bounded', () => {
    const fleet = fleetFromEnv(fleetEnv);
    assert.equal(clusterDimension('west', fleet), 'west');
    assert.equal(clusterDimension('made-up', fleet), 'unknown');
    assert.equal(clusterDimension(undefined, fleet), 'unknown');
  });
});

describe('identifying the calling cluster by its secret', () => {
  const clusters = [
    { cluster: 'east', secrets: [A1, A0] },
    { cluster: 'west', secrets: [B1] },
  ];

  it('matches current and previous secrets to their cluster, nothing else', async () => {
    assert.equal(await matchCluster(A1, clusters), 'east');
    assert.equal(await matchCluster(A0, clusters), 'east', 'the previous secret, during a rotation');
    assert.equal(await matchCluster(B1, clusters), 'west');
    assert.equal(await matchCluster('d'.repeat(43), clusters), undefined);
    assert.equal(await matchCluster(A1.slice(1), clusters), undefined);
    assert.equal(await matchCluster('', clusters), undefined);
    assert.equal(await matchCluster(undefined, clusters), undefined);
    // A secret two clusters share cannot tell them apart: neither.
    assert.equal(await matchCluster(B1, [...clusters, { cluster: 'north', secrets: [B1] }]), undefined);
  });

  it('compares every secret of every cluster, in constant time, whichever matches', async () => {
    const crypto = (await import('node:crypto')).default;
    const compare = mock.method(crypto, 'timingSafeEqual');
    // The module's named exports follow the mocked default export.
    syncBuiltinESMExports();
    try {
      for (const given of [A1, B1, 'nope']) {
        compare.mock.resetCalls();
        await matchCluster(given, clusters);
        assert.equal(compare.mock.callCount(), 3, `${given.slice(0, 4)}: all three secrets compared`);
      }
    } finally {
      compare.mock.restore();
      syncBuiltinESMExports();
    }
  });

  it('reads each cluster secret from its own SSM parameter, cached: reads do not grow with requests', async () => {
    const ssm = fakeSsm({
      [clusterParameterName(TEMPLATE, 'east')]: `${A1},${A0}`,
      [clusterParameterName(TEMPLATE, 'west')]: B1,
    });
    const env = { ...fleetEnv, [FLEET_PATH_SECRET_SSM_ENV]: TEMPLATE };
    const fleet = fleetFromEnv(env)!;
    for (let i = 0; i < 50; i++) {
      assert.equal(
        (await identifyCluster(i % 2 ? A1 : B1, fleet, env, { read: ssm.read, maxAgeMs: 1_000 })).cluster,
        i % 2 ? 'east' : 'west',
      );
    }
    assert.equal(ssm.reads(), 2, 'one read per cluster');
  });

  it('a rotation of one cluster is picked up on a miss, rate-limited, and leaves the other alone', async () => {
    const east = clusterParameterName(TEMPLATE, 'east');
    const west = clusterParameterName(TEMPLATE, 'west');
    const ssm = fakeSsm({ [east]: A1, [west]: B1 });
    const env = { ...fleetEnv, [FLEET_PATH_SECRET_SSM_ENV]: TEMPLATE };
    const fleet = fleetFromEnv(env)!;
    const options = { read: ssm.read, maxAgeMs: 1_000, refreshOnMissMs: 0 };
    assert.equal((await identifyCluster(A1, fleet, env, options)).cluster, 'east');
    const NEW = 'e'.repeat(43);
    ssm.set(east, `${NEW},${A1}`);
    assert.equal(
      (await identifyCluster(NEW, fleet, env, options)).cluster,
      'east',
      'the new secret, after a refetch on the miss',
    );
    assert.equal((await identifyCluster(A1, fleet, env, options)).cluster, 'east', 'the previous one still');
    ssm.set(east, NEW);
    assert.equal(
      (await identifyCluster(A1, fleet, env, { ...options, refreshOnMissMs: 1_000 })).cluster,
      'east',
      'a retirement waits for the cache',
    );
    assert.equal((await identifyCluster(A1, fleet, env, options)).cluster, 'east', 'a match never refetches');
    assert.equal(
      (await identifyCluster(A1, fleet, env, { ...options, maxAgeMs: 0 })).cluster,
      undefined,
      'once the value ages, it is refused',
    );
    assert.equal((await identifyCluster(B1, fleet, env, options)).cluster, 'west', 'the other cluster is untouched');
  });

  it('a cluster whose parameter is gone fails alone, with the reason', async () => {
    const ssm = fakeSsm({
      [clusterParameterName(TEMPLATE, 'west')]: B1,
      [clusterParameterName(TEMPLATE, 'east')]: 'short',
    });
    const env = { ...fleetEnv, [FLEET_PATH_SECRET_SSM_ENV]: TEMPLATE };
    const result = await identifyCluster(B1, fleetFromEnv(env)!, env, { read: ssm.read });
    assert.equal(result.cluster, 'west');
    assert.match(result.problems.join('\n'), /cluster east\)? holds a secret that is not/);
    const gone = fakeSsm({ [clusterParameterName(TEMPLATE, 'west')]: B1 });
    const missing = await identifyCluster(A1, fleetFromEnv(env)!, env, { read: gone.read });
    assert.equal(missing.cluster, undefined);
    assert.match(
      missing.problems[0]!,
      /cluster east: could not read SSM parameter \/kube-lambda-webhooks\/svc\/prod\/clusters\/east\/path-secret/,
    );
  });

  it('takes local secrets per cluster, and refuses a setting that cannot work', async () => {
    const fleet = fleetFromEnv(fleetEnv)!;
    const local = { ...fleetEnv, [FLEET_PATH_SECRETS_ENV]: JSON.stringify({ east: `${A1},${A0}`, west: B1 }) };
    assert.equal((await identifyCluster(A0, fleet, local)).cluster, 'east');
    const partial = await fleetSecrets(fleet, { ...fleetEnv, [FLEET_PATH_SECRETS_ENV]: JSON.stringify({ east: A1 }) });
    assert.deepEqual(
      partial.clusters.map((c) => c.cluster),
      ['east'],
    );
    assert.match(partial.problems[0]!, /no secret for cluster west/);
    await assert.rejects(fleetSecrets(fleet, fleetEnv), /no cluster secrets are/);
    await assert.rejects(
      fleetSecrets(fleet, { ...fleetEnv, [FLEET_PATH_SECRET_SSM_ENV]: '/one/path-secret' }),
      /has no \{cluster\}/,
    );
    await assert.rejects(fleetSecrets(fleet, { ...fleetEnv, [FLEET_PATH_SECRETS_ENV]: '{' }), /not JSON/);
    await assert.rejects(fleetSecrets(fleet, { ...fleetEnv, [FLEET_PATH_SECRETS_ENV]: '"x"' }), /not a JSON object/);
  });
});

describe('authenticating a fleet function', () => {
  const reg = { name: 'pod-policy', auth: 'auto' as const };
  const env = { ...fleetEnv, [FLEET_PATH_SECRETS_ENV]: JSON.stringify({ east: `${A1},${A0}`, west: B1 }) };

  it('is not involved without KLW_FLEET', async () => {
    assert.equal(await authenticateFleet(reg, { path: `/pod-policy/${A1}`, headers: {} }, {}), undefined);
  });

  it('names the cluster by the secret in the path, never by the body', async () => {
    const west = await authenticateFleet(reg, { path: `/prod/pod-policy/${B1}`, headers: {} }, env);
    assert.deepEqual(west?.caller, fleetCaller('west', fleetFromEnv(env)));
    assert.equal(west?.caller?.cluster, 'west');
    const east = await authenticateFleet(reg, { path: '/x', headers: {}, pathParameters: { secret: A0 } }, env);
    assert.equal(east?.caller?.cluster, 'east');
    const none = await authenticateFleet({ ...reg, auth: 'none' }, { path: '/pod-policy', headers: {} }, env);
    assert.deepEqual(none, { caller: { identity: 'none', dimension: 'unknown' } });
  });

  it('answers 404 to an unknown secret, with the path redacted, and 500 to a broken setting', async () => {
    const wrong = await authenticateFleet(reg, { path: `/prod/pod-policy/${'z'.repeat(43)}`, headers: {} }, env);
    assert.equal(wrong!.refusal!.reply.statusCode, 404);
    assert.equal(wrong!.refusal!.reply.body, '{"message":"Not Found"}');
    assert.equal(wrong!.refusal!.fields.path, '/prod/pod-policy/***');
    assert.equal(wrong!.caller, undefined);
    const missing = await authenticateFleet(reg, { path: '/prod/pod-policy', headers: {} }, env);
    assert.equal(missing!.refusal!.reply.statusCode, 404);
    const broken = await authenticateFleet(reg, { path: `/pod-policy/${A1}`, headers: {} }, { [FLEET_ENV]: '{' });
    assert.equal(broken!.refusal!.reply.statusCode, 500);
    assert.match(broken!.refusal!.msg, /KLW_FLEET is not JSON/);
  });

  it('a retired cluster fails while the others work, from SSM', async () => {
    const ssm = fakeSsm({ [clusterParameterName(TEMPLATE, 'west')]: B1 });
    const ssmEnv = { ...fleetEnv, [FLEET_PATH_SECRET_SSM_ENV]: TEMPLATE };
    const east = await authenticateFleet(reg, { path: `/pod-policy/${A1}`, headers: {} }, ssmEnv, ssm.read);
    assert.equal(east!.refusal!.reply.statusCode, 404);
    assert.match(String(east!.refusal!.fields.problems), /cluster east: could not read/);
    const west = await authenticateFleet(reg, { path: `/pod-policy/${B1}`, headers: {} }, ssmEnv, ssm.read);
    assert.equal(west?.caller?.cluster, 'west');
  });
});
