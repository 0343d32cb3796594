import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { describe, it } from 'node:test';
import { parse } from 'yaml';
import { conversionReview, expectRoundTrip, invoke } from 'kube-lambda-webhooks/testing';
import type { ConversionReview } from 'kube-lambda-webhooks';
import crontab, { BAD_HOST_PORT } from '../../functions/crontab-conversion/index.ts';
import { fixture } from '../helpers.ts';

const meta = (name: string) => ({
  name,
  namespace: 'default',
  uid: `uid-${name}`,
  resourceVersion: '7',
  creationTimestamp: '2019-09-04T14:03:02Z',
});
const beta = (name: string, hostPort?: string) => ({
  apiVersion: 'example.com/v1beta1',
  kind: 'CronTab',
  metadata: meta(name),
  ...(hostPort === undefined ? {} : { hostPort }),
});
const v1 = (name: string, host: string, port: string) => ({
  apiVersion: 'example.com/v1',
  kind: 'CronTab',
  metadata: meta(name),
  host,
  port,
});

describe('crontab-conversion', () => {
  it('converts the reference request to the reference response', async () => {
    const review = fixture<ConversionReview>('reviews/conversion-v1');
    const result = await invoke(crontab, review);
    assert.deepEqual(result.review, fixture('reviews/conversion-v1-response'));
  });

  it('converts v1 to v1beta1 (v1beta1 review)', async () => {
    const result = await invoke(
      crontab,
      conversionReview([v1('a', 'localhost', '1234')], 'example.com/v1beta1', { version: 'v1beta1' }),
    );
    assert.equal(result.review.apiVersion, 'apiextensions.k8s.io/v1beta1');
    assert.deepEqual(result.convertedObjects, [beta('a', 'localhost:1234')]);
  });

  it('converts a mixed-version list in order, each at the desired version', async () => {
    const objects = [beta('a', 'h:1'), v1('b', 'h', '2'), beta('c', 'h:3'), v1('d', 'h', '4')];
    for (const desired of ['example.com/v1', 'example.com/v1beta1']) {
      const result = await invoke(crontab, conversionReview(objects, desired));
      assert.equal(result.status, 'Success');
      assert.deepEqual(
        result.convertedObjects.map((o) => [o.metadata?.name, o.apiVersion]),
        ['a', 'b', 'c', 'd'].map((n) => [n, desired]),
      );
    }
  });

  it('keeps every other field', async () => {
    const object = {
      ...beta('keep', 'h:1'),
      spec: { cronSpec: '* * * * */5', image: 'my-awesome-cron-image' },
      status: { lastRun: 'x' },
    };
    const result = await invoke(crontab, conversionReview([object], 'example.com/v1'));
    assert.deepEqual(result.convertedObjects[0], { ...v1('keep', 'h', '1'), spec: object.spec, status: object.status });
  });

  it('round-trips both ways', async () => {
    await expectRoundTrip(crontab, beta('rt', 'example.com:2345'), ['example.com/v1beta1', 'example.com/v1']);
    await expectRoundTrip(crontab, v1('rt', 'localhost', '80'), ['example.com/v1', 'example.com/v1beta1']);
    await expectRoundTrip(crontab, beta('empty'), ['example.com/v1beta1', 'example.com/v1']);
  });

  for (const bad of ['no-port', 'a:b:c', '']) {
    it(`fails with the reference message for hostPort ${JSON.stringify(bad)}`, async () => {
      const result = await invoke(crontab, conversionReview([beta('ok', 'h:1'), beta('bad', bad)], 'example.com/v1'));
      assert.equal(result.status, 'Failed');
      assert.equal(result.message, BAD_HOST_PORT);
      assert.equal(result.review.response.convertedObjects, undefined);
    });
  }

  it('ships the reference CRD: example.com, both versions served, v1beta1 stored, namespaced', () => {
    const crd = parse(readFileSync(new URL('../../functions/crontab-conversion/crd.yaml', import.meta.url), 'utf8'));
    assert.equal(crd.metadata.name, crontab.registration.crd);
    assert.equal(crd.spec.group, 'example.com');
    assert.equal(crd.spec.scope, 'Namespaced');
    assert.deepEqual(
      crd.spec.versions.map((v: any) => [v.name, v.served, v.storage]),
      [
        ['v1beta1', true, true],
        ['v1', true, false],
      ],
    );
    assert.deepEqual(Object.keys(crd.spec.versions[0].schema.openAPIV3Schema.properties), ['hostPort']);
    assert.deepEqual(Object.keys(crd.spec.versions[1].schema.openAPIV3Schema.properties), ['host', 'port']);
  });
});
