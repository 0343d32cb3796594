// What the API server refuses of a mutated object, and the request as read-only to the function.
// The cases restate the API server's checks after admission: EnsureObjectNamespaceMatchesRequestNamespace
// (k8s.io/apiserver pkg/registry/rest/meta.go, its test in meta_test.go), ValidateObjectMetaAccessorUpdate
// (k8s.io/apimachinery pkg/api/validation/objectmeta.go) and a custom resource's ValidateTypeMeta
// (k8s.io/apiextensions-apiserver pkg/registry/customresource/validator.go).
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { allow, defineMutatingWebhook, defineValidatingWebhook, type KubeObject, patched } from '../../../lib/index.ts';
import { admissionReview, expectConformance, invoke, toEvent } from '../../../lib/testing/index.ts';
import { refusedMutation } from '../../../lib/harness/mutation-checks.ts';
import type { AdmissionRequest, Operation } from '../../../lib/review/schemas.ts';
import { captureLogger } from '../../helpers.ts';

type Obj = KubeObject & { spec?: any };
const pod = (metadata: Record<string, unknown> = {}): Obj => ({
  apiVersion: 'v1',
  kind: 'Pod',
  metadata: { name: 'web', namespace: 'shop', uid: 'u-1', ...metadata },
  spec: { nodeName: 'node-1' },
});
const rules = [
  {
    operations: ['CREATE' as const, 'UPDATE' as const],
    apiGroups: [''],
    apiVersions: ['v1'],
    resources: ['pods'],
    scope: 'Namespaced' as const,
  },
];

function request(operation: Operation, object: KubeObject, namespace?: string): AdmissionRequest {
  return admissionReview(object, {
    operation,
    ...(operation === 'UPDATE' ? { oldObject: object } : {}),
    ...(namespace === undefined ? {} : { namespace }),
  }).request;
}

const NAMESPACE = 'the namespace of the provided object does not match the namespace sent on the request';

describe('refusedMutation: what the API server refuses of the object a patch makes', () => {
  const cases: Array<[string, Operation, Obj, Obj, string | undefined]> = [
    ['another namespace on CREATE', 'CREATE', pod(), pod({ namespace: 'other' }), NAMESPACE],
    ['another namespace on UPDATE', 'UPDATE', pod(), pod({ namespace: 'other' }), NAMESPACE],
    ['no namespace: the request fills it in', 'CREATE', pod(), pod({ namespace: undefined }), undefined],
    ['an empty namespace: the request fills it in', 'UPDATE', pod(), pod({ namespace: '' }), undefined],
    [
      'a rename on UPDATE',
      'UPDATE',
      pod(),
      pod({ name: 'api' }),
      'metadata.name: Invalid value: "api": field is immutable',
    ],
    ['a rename on CREATE: stored under the new name', 'CREATE', pod(), pod({ name: 'api' }), undefined],
    [
      'another uid on UPDATE',
      'UPDATE',
      pod(),
      pod({ uid: 'u-2' }),
      'metadata.uid: Invalid value: "u-2": field is immutable',
    ],
    ['no uid on UPDATE: the stored one is kept', 'UPDATE', pod(), pod({ uid: undefined }), undefined],
    ['another uid on CREATE: the API server sets its own', 'CREATE', pod(), pod({ uid: 'u-2' }), undefined],
    ['another kind', 'CREATE', pod(), { ...pod(), kind: 'Service' }, 'kind: Invalid value: "Service": must be Pod'],
    [
      'another apiVersion',
      'UPDATE',
      pod(),
      { ...pod(), apiVersion: 'v2' },
      'apiVersion: Invalid value: "v2": must be v1',
    ],
    ['labels and spec: what an object holds', 'UPDATE', pod(), pod({ labels: { a: 'b' } }), undefined],
  ];
  for (const [what, operation, before, after, expected] of cases) {
    it(`${what}: ${expected ?? 'taken'}`, () => {
      assert.equal(refusedMutation(request(operation, before), after), expected);
    });
  }

  it('a cluster-scoped object given a namespace: the API server clears it', () => {
    const ns: KubeObject = { apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'team' } };
    const req = admissionReview(ns, { resource: 'namespaces', namespace: '' }).request;
    assert.equal(refusedMutation(req, { ...ns, metadata: { name: 'team', namespace: 'x' } }), undefined);
  });
});

describe('the test kit refuses the mutations the API server refuses', () => {
  const mover = defineMutatingWebhook<Obj>({
    name: 'mover',
    rules,
    mutate: (object) => {
      object.metadata!.namespace = 'elsewhere';
    },
  });

  it('invoke fails, naming the function, the field and the fix', async () => {
    await assert.rejects(invoke(mover, admissionReview(pod())), (err: Error) => {
      assert.ok(err instanceof assert.AssertionError);
      assert.match(err.message, /^mover: the API server refuses the object the patch makes: /);
      assert.match(err.message, new RegExp(NAMESPACE));
      assert.match(err.message, /leave kind, apiVersion, metadata\.namespace/);
      return true;
    });
  });

  it('the conformance checks fail on it', async () => {
    await assert.rejects(expectConformance(mover), /mover: CREATE core\/v1 pods .*does not match the namespace/);
  });

  it('a raw patch renaming on UPDATE fails with the field the API server names', async () => {
    const renamer = defineMutatingWebhook({
      name: 'renamer',
      rules,
      mutate: () => patched([{ op: 'replace', path: '/metadata/name', value: 'api' }]),
    });
    const review = admissionReview(pod(), { operation: 'UPDATE', oldObject: pod() });
    await assert.rejects(invoke(renamer, review), /metadata\.name: Invalid value: "api": field is immutable/);
  });
});

describe('the request is read-only to the function', () => {
  it('a write to the request throws under the test kit, naming the line', async () => {
    const writes = defineValidatingWebhook({
      name: 'writes',
      rules,
      validate: (request) => {
        // @ts-expect-error the request is read-only
        request.namespace = 'x';
        return allow();
      },
    });
    await assert.rejects(invoke(writes, admissionReview(pod())), (err: Error) => {
      assert.match(
        err.message,
        /^writes: the function threw .*\n {4}TypeError: Cannot assign to read only property 'namespace'/,
      );
      assert.match(err.message, /test\/lib\/harness\/mutation-checks\.test\.ts:\d+:\d+/);
      return true;
    });
  });

  it('so is what it holds, the objects of a validating function included', async () => {
    const writes = defineValidatingWebhook<Obj>({
      name: 'writes-deep',
      rules,
      validate: (request) => {
        request.object!.metadata!.labels = { changed: 'yes' };
        return allow();
      },
    });
    await assert.rejects(
      invoke(writes, admissionReview(pod())),
      /Cannot add property labels, object is not extensible/,
    );
    const userInfo = defineValidatingWebhook({
      name: 'writes-user',
      rules,
      validate: (request) => {
        request.userInfo.username = 'root';
        return allow();
      },
    });
    await assert.rejects(invoke(userInfo, admissionReview(pod())), /Cannot assign to read only property 'username'/);
  });

  it('a mutating function writes its copy, request.object included, and nothing else', async () => {
    const mutates = defineMutatingWebhook<Obj>({
      name: 'mutates',
      rules,
      mutate: (object, request) => {
        object.spec.nodeName = 'node-2';
        request.object!.metadata!.labels = { seen: 'yes' };
        assert.throws(() => {
          // @ts-expect-error the request is read-only
          request.operation = 'DELETE';
        }, TypeError);
        assert.throws(() => {
          request.oldObject!.metadata!.name = 'x';
        }, TypeError);
      },
    });
    const result = await invoke(mutates, admissionReview(pod(), { operation: 'UPDATE', oldObject: pod() }));
    assert.equal((result.object as Obj | null)?.spec?.nodeName, 'node-2');
    assert.deepEqual(result.object?.metadata?.labels, { seen: 'yes' });
  });

  it('the deployed handler does not freeze (a write there changes nothing, at no cost)', async () => {
    const writes = defineValidatingWebhook({
      name: 'writes-deployed',
      rules,
      validate: (request) => {
        (request as { namespace?: string }).namespace = 'x';
        return allow();
      },
    });
    const raw = await writes.withOptions({ logger: captureLogger().logger })(
      toEvent(admissionReview(pod()), { path: writes.registration.path }),
    );
    assert.equal(JSON.parse(raw.body).response.allowed, true);
  });
});

describe('an invalid raw patch names the operation, its path and where the path stops', () => {
  it('reports the index, the op and path, and the part that is not an object', async () => {
    const bad = defineMutatingWebhook({
      name: 'bad-patch',
      rules,
      mutate: () =>
        patched([
          { op: 'add', path: '/spec/x', value: 1 },
          { op: 'replace', path: '/spec/nodeName/extra', value: 'y' },
        ]),
    });
    const result = await invoke(bad, admissionReview(pod()), { expectFailure: true });
    assert.equal(
      result.failure?.error,
      'UserFunctionError: invalid patch operation 1 (replace "/spec/nodeName/extra"): /spec/nodeName is a string, ' +
        'so it has no "extra" to go into [OPERATION_PATH_UNRESOLVABLE]',
    );
  });

  it('a replace without a value says so, with the index and path', async () => {
    const bad = defineMutatingWebhook({
      name: 'no-value',
      rules,
      mutate: () => patched([{ op: 'replace', path: '/spec/nodeName/extra' } as never]),
    });
    const result = await invoke(bad, admissionReview(pod()), { expectFailure: true });
    assert.match(
      result.failure!.error,
      /^UserFunctionError: invalid patch operation 0 \(replace "\/spec\/nodeName\/extra"\): Operation `value` property is not present/,
    );
  });
});
