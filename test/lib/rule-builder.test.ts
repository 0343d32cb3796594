import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import { stringify } from 'yaml';
import {
  allow,
  defineMutatingWebhook,
  defineValidatingWebhook,
  deny,
  Deployment,
  Namespace,
  on,
  Pod,
} from 'kube-lambda-webhooks';
import { buildFunction, bundlePath } from '../../infra/build.ts';
import { completeAdmissionRegistration } from '../../lib/registration.ts';
import { buildsForReal } from '../kept-builds.ts';

// What these tests check is the build itself: made every run, never a kept one.
buildsForReal();

describe('on(...): typed rules', () => {
  it('builds a plain rule from the descriptor: group, version, plural, scope, operations in order', () => {
    const rule = on(Pod).create().update();
    assert.deepEqual(
      { ...rule },
      {
        operations: ['CREATE', 'UPDATE'],
        apiGroups: [''],
        apiVersions: ['v1'],
        resources: ['pods'],
        scope: 'Namespaced',
      },
    );
    assert.deepEqual(JSON.parse(JSON.stringify(rule)), { ...rule });
    assert.deepEqual(
      { ...on(Namespace).delete() },
      { operations: ['DELETE'], apiGroups: [''], apiVersions: ['v1'], resources: ['namespaces'], scope: 'Cluster' },
    );
    assert.deepEqual({ ...on(Deployment).create() }.apiGroups, ['apps']);
  });

  it('matches every operation when none is named, and adds each operation once', () => {
    assert.deepEqual(on(Pod).operations, ['*']);
    assert.deepEqual(on(Pod).create().create().operations, ['CREATE']);
  });

  it('names subresources and versions', () => {
    const rule = on(Pod).connect().subresources('exec', 'attach');
    assert.deepEqual(rule.resources, ['pods/exec', 'pods/attach']);
    assert.deepEqual(rule.operations, ['CONNECT']);
    assert.deepEqual(on(Deployment).versions('v1', 'v1beta1').apiVersions, ['v1', 'v1beta1']);
  });

  it('never changes a rule already built', () => {
    const base = on(Pod).create();
    const more = base.update().subresources('status');
    assert.deepEqual(base.operations, ['CREATE']);
    assert.deepEqual(base.resources, ['pods']);
    assert.deepEqual(more.operations, ['CREATE', 'UPDATE']);
  });

  it('is registered as plain data: no methods reach the registration or the manifests', () => {
    const reg = completeAdmissionRegistration('validating', {
      name: 'typed',
      rules: [
        on(Pod).create(),
        { operations: ['DELETE'], apiGroups: ['apps'], apiVersions: ['v1'], resources: ['deployments'] },
      ],
    });
    for (const rule of reg.rules) {
      assert.equal(Object.getPrototypeOf(rule), Object.prototype);
      assert.equal(typeof (rule as unknown as { create?: unknown }).create, 'undefined');
      assert.deepEqual(Object.getOwnPropertySymbols(rule), []);
    }
    assert.match(stringify(reg.rules), /resources:\n\s+- pods/);
    assert.doesNotMatch(stringify(reg.rules), /create|function/);
  });

  it('refuses what is not a resource descriptor', () => {
    for (const bad of [undefined, null, 'pods', { resource: 'pods' }, { group: '', version: 'v1' }]) {
      assert.throws(() => on(bad as never), TypeError);
    }
  });

  it('types the review object by the resource (checked by tsc)', () => {
    const typed = defineValidatingWebhook({
      name: 'typed-pods',
      rules: [on(Pod).create().update()],
      validate: (request) =>
        request.object?.spec?.containers.some((c) => c.image?.endsWith(':latest')) ? deny('pin the image') : allow(),
    });
    defineValidatingWebhook({
      name: 'typed-deployments',
      rules: [on(Deployment).create()],
      // @ts-expect-error a Deployment has no spec.containers
      validate: (request) => (request.object?.spec?.containers ? deny('no') : allow()),
    });
    defineMutatingWebhook({
      name: 'typed-mutating',
      rules: [on(Deployment).create()],
      mutate: (deployment) => {
        deployment.spec!.replicas = deployment.spec?.replicas ?? 1;
      },
    });
    // Plain rules keep working, the object is any Kubernetes object.
    defineValidatingWebhook({
      name: 'plain',
      rules: [{ operations: ['CREATE'], apiGroups: [''], apiVersions: ['v1'], resources: ['pods'] }],
      validate: (request) => (request.object?.metadata?.name ? allow() : deny('unnamed')),
    });
    assert.equal(typed.registration.rules.length, 1);
  });
});

describe('on(...) in a bundle', () => {
  // Inside the repository, so `kube-lambda-webhooks` resolves to this package.
  const work = mkdtempSync(join(process.cwd(), '.klw-test-'));
  after(() => rmSync(work, { recursive: true, force: true }));

  const build = async (name: string, rules: string, imports: string) => {
    mkdirSync(join(work, 'functions', name), { recursive: true });
    const entry = join(work, 'functions', name, 'index.ts');
    writeFileSync(
      entry,
      `import { allow, defineValidatingWebhook${imports} } from 'kube-lambda-webhooks';\n` +
        `export const webhook = defineValidatingWebhook({ name: '${name}', rules: [${rules}], validate: () => allow() });\n` +
        'export const handler = webhook.handler;\n',
    );
    const built = await buildFunction(work, { name, entry });
    return { bytes: built.bundleBytes, code: readFileSync(bundlePath(work, name), 'utf8') };
  };

  it('adds the builder and one small descriptor, no model classes and no resource table', async () => {
    const plain = await build(
      'plain-rules',
      "{ operations: ['CREATE'], apiGroups: [''], apiVersions: ['v1'], resources: ['pods'] }",
      '',
    );
    const typed = await build('typed-rules', 'on(Pod).create()', ', on, Pod');
    assert.match(typed.code, /"pods"/);
    assert.doesNotMatch(typed.code, /deployments|flowcontrol|IoK8sApiCoreV1|setValidateFunc/);
    // The builder (a few hundred bytes minified) and one descriptor: well under 2 KiB more.
    assert.ok(typed.bytes - plain.bytes < 2048, `on(Pod) grew the bundle by ${typed.bytes - plain.bytes} bytes`);
  });
});
