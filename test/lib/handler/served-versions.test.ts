// The compile rule of expressions served from Lambda (policies of both kinds, matchConditions
// enforced in-function): which version compiles for a caller, each version once, and inside
// Lambda all of them at load, once the chunks the expressions need are loaded.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { servedCompiler, servedVersion } from '../../../lib/handler/served-versions.ts';

describe('servedCompiler', () => {
  it("the caller's version first, then the definition's, then the newest", () => {
    assert.equal(servedVersion('1.31', '1.29'), '1.29');
    assert.equal(servedVersion('1.29', undefined), '1.29');
    assert.equal(servedVersion(undefined, undefined), undefined);
  });

  it('compiles each version once', () => {
    const seen: Array<string | undefined> = [];
    const compile = servedCompiler(
      '1.30',
      (v) => (seen.push(v), { v }),
      () => undefined,
    );
    assert.equal(compile('1.29'), compile('1.29'));
    assert.deepEqual(compile().v, '1.30');
    compile('1.30');
    assert.deepEqual(seen, ['1.29', '1.30']);
  });

  it("inside Lambda, the definition's and every fleet version compile at load, after the chunks they need are loaded", async () => {
    const saved = { name: process.env.AWS_LAMBDA_FUNCTION_NAME, fleet: process.env.KLW_FLEET };
    process.env.AWS_LAMBDA_FUNCTION_NAME = 'needs-ip';
    process.env.KLW_FLEET = JSON.stringify({ east: { kubeVersion: '1.29' }, west: {}, north: { kubeVersion: '1.31' } });
    try {
      const seen: Array<string | undefined> = [];
      let ready!: () => void;
      const loading = new Promise<void>((r) => {
        ready = r;
      });
      servedCompiler(
        '1.30',
        (v) => seen.push(v),
        () => loading,
      );
      assert.deepEqual(seen, [], 'nothing compiles before the chunks are loaded');
      ready();
      await loading;
      assert.deepEqual(seen, ['1.30', '1.29', '1.31']);
    } finally {
      for (const [key, value] of [
        ['AWS_LAMBDA_FUNCTION_NAME', saved.name],
        ['KLW_FLEET', saved.fleet],
      ] as const)
        if (value === undefined) delete process.env[key];
        else process.env[key] = value;
    }
  });
});
