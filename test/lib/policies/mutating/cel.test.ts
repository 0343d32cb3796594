import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { rewriteObjectConstruction } from '../../../../lib/matchconditions/object-construction.ts';
import { compileMutation } from '../../../../lib/policies/mutating/cel.ts';
import { apply, check, checkWebhook, deployment, jsonPatch, type Row, run, withLabels } from './rows.ts';

// Restated from k8s.io/apiserver pkg/admission/plugin/policy/mutating/compilation_test.go (TestCompilation).
const COMPILATION_TEST_GO: Row[] = [
  {
    name: 'applyConfiguration then jsonPatch',
    mutations: [
      apply('Object{ spec: Object.spec{ replicas: object.spec.replicas + 100 } }'),
      jsonPatch('[ JSONPatch{op: "replace", path: "/spec/replicas", value: object.spec.replicas + 10} ]'),
    ],
    object: deployment({ replicas: 1 }),
    want: deployment({ replicas: 111 }),
  },
  {
    name: 'jsonPatch then applyConfiguration',
    mutations: [
      jsonPatch('[ JSONPatch{op: "replace", path: "/spec/replicas", value: object.spec.replicas + 10} ]'),
      apply('Object{ spec: Object.spec{ replicas: object.spec.replicas + 100 } }'),
    ],
    object: deployment({ replicas: 1 }),
    want: deployment({ replicas: 111 }),
  },
  {
    name: 'jsonPatch with variable',
    variables: [{ name: 'desired', expression: '10' }],
    mutations: [jsonPatch('[ JSONPatch{op: "replace", path: "/spec/replicas", value: variables.desired + 1}, ]')],
    object: deployment({ replicas: 1 }),
    want: deployment({ replicas: 11 }),
  },
  {
    name: 'apply configuration with variable',
    variables: [{ name: 'desired', expression: '10' }],
    mutations: [apply('Object{ spec: Object.spec{ replicas: variables.desired + 1 } }')],
    object: deployment({ replicas: 1 }),
    want: deployment({ replicas: 11 }),
  },
  {
    name: 'apply configuration with params',
    mutations: [apply("Object{ spec: Object.spec{ replicas: int(params.data['k1']) } }")],
    params: { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'p', namespace: 'default' }, data: { k1: '100' } },
    object: deployment({ replicas: 1 }),
    want: deployment({ replicas: 100 }),
  },
  {
    name: 'jsonPatch with excessive cost',
    variables: [{ name: 'list', expression: '[0,1,2,3,4,5,6,7,8,9]' }],
    mutations: [
      jsonPatch(`[ JSONPatch{op: "replace", path: "/spec/replicas",
        value: variables.list.all(x1, variables.list.all(x2, variables.list.all(x3, variables.list.all(x4, variables.list.all(x5, variables.list.all(x5, "0123456789" == "0123456789"))))))? 1 : 0
      } ]`),
    ],
    object: deployment({ replicas: 1 }),
    error: 'operation cancelled: actual cost limit exceeded',
  },
  {
    name: 'applyConfiguration with excessive cost',
    variables: [{ name: 'list', expression: '[0,1,2,3,4,5,6,7,8,9]' }],
    mutations: [
      apply(`Object{ spec: Object.spec{
        replicas: variables.list.all(x1, variables.list.all(x2, variables.list.all(x3, variables.list.all(x4, variables.list.all(x5, variables.list.all(x5, "0123456789" == "0123456789"))))))? 1 : 0
      } }`),
    ],
    object: deployment({ replicas: 1 }),
    error: 'operation cancelled: actual cost limit exceeded',
  },
  {
    name: 'request variable',
    mutations: [
      jsonPatch(`[ JSONPatch{op: "replace", path: "/spec/replicas",
        value: request.kind.group == 'apps' && request.kind.version == 'v1' && request.kind.kind == 'Deployment' ? 10 : 0 } ]`),
    ],
    object: deployment({ replicas: 1 }),
    want: deployment({ replicas: 10 }),
  },
  {
    name: 'namespace request variable',
    mutations: [
      jsonPatch(
        `[ JSONPatch{op: "replace", path: "/spec/replicas", value: namespaceObject.metadata.name == 'ns1' ? 10 : 0 } ]`,
      ),
    ],
    namespaceObject: { apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'ns1' } },
    object: deployment({ replicas: 1 }),
    want: deployment({ replicas: 10 }),
  },
  {
    name: 'authorizer check',
    mutations: [
      jsonPatch(`[ JSONPatch{op: "replace", path: "/spec/replicas",
        value: authorizer.group('').resource('endpoints').check('create').allowed() ? 10 : 0 } ]`),
    ],
    object: deployment({ replicas: 1 }),
    want: deployment({ replicas: 10 }),
  },
  {
    name: 'object type has field access',
    mutations: [
      jsonPatch(
        '[ JSONPatch{ op: "add", path: "/metadata/labels", value: { "value": Object{field: "fieldValue"}.field, } } ]',
      ),
    ],
    object: withLabels({}),
    want: withLabels({ value: 'fieldValue' }),
  },
  {
    name: 'object type has field testing',
    mutations: [
      jsonPatch(`[ JSONPatch{ op: "add", path: "/metadata/labels", value: {
        "field": string(has(Object{field: "fieldValue"}.field)),
        "field-unset": string(has(Object{}.field)),
      } } ]`),
    ],
    object: withLabels({}),
    want: withLabels({ field: 'true', 'field-unset': 'false' }),
  },
  {
    name: 'object type equality',
    mutations: [
      jsonPatch(`[ JSONPatch{ op: "add", path: "/metadata/labels", value: {
        "empty": string(Object{} == Object{}),
        "same": string(Object{field: "x"} == Object{field: "x"}),
        "different": string(Object{field: "x"} == Object{field: "y"}),
      } } ]`),
    ],
    object: withLabels({}),
    want: withLabels({ empty: 'true', same: 'true', different: 'false' }),
  },
  {
    name: 'object types are not fully type checked',
    mutations: [jsonPatch('[ JSONPatch{ op: "add", path: "/spec", value: Object.invalid{replicas: 1} } ]')],
    object: withLabels({}),
    // The spec replaced by one of only replicas, defaulted again as the API server defaults it.
    want: deployment({ replicas: 1 }, { name: 'd', labels: {} }),
  },
];

// The rows of smd_test.go and json_patch_test.go that exercise the expressions themselves.
const EXPRESSION_ROWS: Row[] = [
  {
    name: 'apply configuration with conditionals (smd_test.go)',
    mutations: [
      apply(
        'Object{ spec: Object.spec{ replicas: object.spec.replicas % 2 == 0?object.spec.replicas + 1:object.spec.replicas } }',
      ),
    ],
    object: deployment({ replicas: 2 }),
    want: deployment({ replicas: 3 }),
  },
  {
    name: 'apply configuration with old object (smd_test.go)',
    mutations: [
      apply(
        'Object{ spec: Object.spec{ replicas: oldObject.spec.replicas % 2 == 0?oldObject.spec.replicas + 1:oldObject.spec.replicas } }',
      ),
    ],
    object: deployment({ replicas: 1 }),
    oldObject: deployment({ replicas: 2 }),
    want: deployment({ replicas: 3 }),
  },
  {
    name: 'apply configuration add to listType=map (smd_test.go)',
    mutations: [
      apply(`Object{ spec: Object.spec{ template: Object.spec.template{ spec: Object.spec.template.spec{
        volumes: [Object.spec.template.spec.volumes{ name: "y" }] } } } }`),
    ],
    object: deployment({ template: { spec: { volumes: [{ name: 'x' }] } } }),
    want: deployment({ template: { spec: { volumes: [{ name: 'x' }, { name: 'y' }] } } }),
  },
  {
    name: 'apply configuration with invalid type name (smd_test.go)',
    mutations: [apply('Object{ spec: Object.specx{ replicas: 1 } }')],
    object: deployment({ replicas: 1 }),
    error:
      'type mismatch: unexpected type name "Object.specx", expected "Object.spec", which matches field name path from root Object type',
  },
  {
    name: 'apply configuration with invalid return type (smd_test.go)',
    mutations: [apply(`"I'm a teapot!"`)],
    object: deployment({ replicas: 1 }),
    error: 'must evaluate to Object but got string',
  },
  {
    name: 'apply configuration with invalid initializer return type (smd_test.go)',
    mutations: [apply('Object.spec.metadata{}')],
    object: deployment({ replicas: 1 }),
    error: 'must evaluate to Object but got Object.spec.metadata',
  },
  {
    name: 'JSONPatch patch type has field access (json_patch_test.go)',
    mutations: [
      jsonPatch(`[ JSONPatch{ op: "add", path: "/metadata/labels", value: {
        "op": JSONPatch{op: "opValue"}.op,
        "path": JSONPatch{path: "pathValue"}.path,
        "from": JSONPatch{from: "fromValue"}.from,
        "value": string(JSONPatch{value: "valueValue"}.value),
      } } ]`),
    ],
    object: withLabels({}),
    want: withLabels({ op: 'opValue', path: 'pathValue', from: 'fromValue', value: 'valueValue' }),
  },
  {
    name: 'JSONPatch patch type equality (json_patch_test.go)',
    mutations: [
      jsonPatch(`[ JSONPatch{ op: "add", path: "/metadata/labels", value: {
        "empty": string(JSONPatch{} == JSONPatch{}),
        "partial": string(JSONPatch{op: "add"} == JSONPatch{op: "add"}),
        "different-op": string(JSONPatch{op: "add"} == JSONPatch{op: "remove"}),
        "different-value": string(JSONPatch{op: "add", value: "1"} == JSONPatch{op: "add", value: 1}),
      } } ]`),
    ],
    object: withLabels({}),
    want: withLabels({ empty: 'true', partial: 'true', 'different-op': 'false', 'different-value': 'false' }),
  },
  {
    name: 'JSONPatch key escaping (json_patch_test.go)',
    mutations: [
      jsonPatch(`[ JSONPatch{ op: "add", path: "/metadata/labels", value: {} },
        JSONPatch{ op: "add", path: "/metadata/labels/" + jsonpatch.escapeKey("k8s.io/x~y"), value: "true" } ]`),
    ],
    object: deployment({}),
    want: withLabels({ 'k8s.io/x~y': 'true' }),
  },
  {
    name: 'jsonPatch with CEL initializer (json_patch_test.go)',
    mutations: [
      jsonPatch(`[ JSONPatch{op: "add", path: "/spec/template/spec/containers/-", value: Object.spec.template.spec.containers{
        name: "x", ports: [Object.spec.template.spec.containers.ports{containerPort: 8080}] } } ]`),
    ],
    object: deployment({ template: { spec: { containers: [{ name: 'a' }] } } }),
    want: deployment({
      template: { spec: { containers: [{ name: 'a' }, { name: 'x', ports: [{ containerPort: 8080 }] }] } },
    }),
  },
  {
    name: 'jsonPatch invalid CEL initializer field (json_patch_test.go)',
    mutations: [
      jsonPatch(`[ JSONPatch{op: "add", path: "/spec/template/spec/containers/-", value: Object.spec.template.spec.containers{
        name: "x", ports: [Object.spec.template.spec.containers.ports{containerPortZ: 8080}] } } ]`),
    ],
    object: deployment({ template: { spec: { containers: [{ name: 'a' }] } } }),
    error:
      'Internal error occurred: strict decoding error: unknown field "spec.template.spec.containers[1].ports[0].containerPortZ"',
    statusCode: 500,
  },
  {
    name: 'jsonPatch invalid CEL initializer type (json_patch_test.go)',
    mutations: [
      jsonPatch(`[ JSONPatch{op: "add", path: "/spec/template/spec/containers/-", value: Object.spec.template.spec.containers{
        name: "x", ports: [Object.spec.template.spec.containers.portsZ{containerPort: 8080}] } } ]`),
    ],
    object: deployment({ template: { spec: { containers: [{ name: 'a' }] } } }),
    error:
      ' mismatch: unexpected type name "Object.spec.template.spec.containers.portsZ", expected "Object.spec.template.spec.containers.ports", which matches field name path from root Object type',
  },
  {
    name: 'jsonPatch with list concatenation between typed and unstructured objects (json_patch_test.go)',
    mutations: [
      jsonPatch(`[ JSONPatch{op: "add", path: "/spec/template/spec/initContainers",
        value: object.spec.template.spec.containers + [{"name": "unstructured-init", "image": "alpine:3.18"}]} ]`),
    ],
    object: deployment({ template: { spec: { containers: [{ name: 'main-app', image: 'nginx:1.24' }] } } }),
    want: deployment({
      template: {
        spec: {
          containers: [{ name: 'main-app', image: 'nginx:1.24' }],
          initContainers: [
            { name: 'main-app', image: 'nginx:1.24' },
            { name: 'unstructured-init', image: 'alpine:3.18' },
          ],
        },
      },
    }),
  },
  {
    name: 'jsonPatch with scalar int and bool as values (json_patch_test.go)',
    mutations: [
      jsonPatch(`[ JSONPatch{op: "add", path: "/spec/progressDeadlineSeconds", value: object.spec.replicas},
        JSONPatch{op: "add", path: "/spec/template", value: {"spec": {"hostNetwork": object.spec.paused}}} ]`),
    ],
    object: deployment({ replicas: 3, paused: true }),
    want: deployment({
      replicas: 3,
      paused: true,
      progressDeadlineSeconds: 3,
      template: { spec: { hostNetwork: true } },
    }),
  },
];

describe('mutating policy expressions (compilation_test.go)', () => {
  for (const row of COMPILATION_TEST_GO) {
    it(row.name, () => check(row));
    it(`${row.name}: served from Lambda, as native`, () => checkWebhook(row));
  }
});

describe('mutating policy expressions (smd_test.go, json_patch_test.go)', () => {
  for (const row of EXPRESSION_ROWS) {
    it(row.name, () => check(row));
    it(`${row.name}: served from Lambda, as native`, () => checkWebhook(row));
  }
});

describe('object construction', () => {
  it('rewrites constructions into typed map literals, leaving strings and comments alone', () => {
    assert.equal(
      rewriteObjectConstruction('Object{a: "Object{b: 1}", b: 1 // Object{c: 2}\n}'),
      '{"\\u0000@type": dyn("Object"), "a": dyn( "Object{b: 1}"), "b": dyn( 1 // Object{c: 2}\n)}',
    );
    assert.equal(rewriteObjectConstruction('object.spec{x: 1}'), 'object.spec{x: 1}');
    assert.equal(
      rewriteObjectConstruction('JSONPatch{op: "add"}.op'),
      'string({"\\u0000@type": dyn("JSONPatch"), "op": dyn( "add")}.op)',
    );
    assert.equal(rewriteObjectConstruction('Objects{x: 1}'), 'Objects{x: 1}');
  });

  it('refuses a JSONPatch expression that is no list, and a variable of the wrong kind', () => {
    assert.equal(
      compileMutation('JSONPatch{op: "add"}', 'JSONPatch'),
      'must evaluate to list(JSONPatch) but got map(string, dyn)',
    );
    assert.equal(compileMutation('1', 'ApplyConfiguration'), 'must evaluate to Object but got int');
  });

  it('a type error is the text of the compiler once, as the API server gives it', () => {
    const error = compileMutation('[JSONPatch{op: "add", path: "/a", value: {"a": 1, "b": "x"}}]', 'JSONPatch');
    assert.equal(typeof error, 'string');
    assert.match(error as string, /^compilation failed: ERROR: <input>:1:\d+: expected type 'int' but found 'string'/);
  });

  it('jsonpatch.escapeKey escapes ~ before /', () => {
    const outcome = run({
      name: 'escape',
      mutations: [
        jsonPatch('[JSONPatch{op: "add", path: "/metadata/labels/" + jsonpatch.escapeKey("a~1/b"), value: "v"}]'),
      ],
      object: withLabels({}),
    });
    assert.deepEqual(outcome.object, withLabels({ 'a~1/b': 'v' }));
  });

  it('a failing mutation is recorded and the next one still runs', () => {
    const outcome = run({
      name: 'two',
      mutations: [
        jsonPatch('[JSONPatch{op: "remove", path: "/spec/missing"}]'),
        apply('Object{spec: Object.spec{replicas: 5}}'),
      ],
      object: deployment({ replicas: 1 }),
    });
    assert.deepEqual(outcome.errors, [
      "JSON Patch: error in remove for path: '/spec/missing': Unable to remove nonexistent key: missing: missing value",
    ]);
    assert.deepEqual(outcome.object, deployment({ replicas: 5 }));
    assert.equal(outcome.changed, true);
  });
});

describe('apply configuration result types', () => {
  it('takes an expression whose type only evaluation tells, and checks it then', () => {
    const compiled = compileMutation('true ? Object{spec: Object.spec{replicas: 1}} : Object{}', 'ApplyConfiguration');
    assert.equal(typeof compiled, 'object');
    const dynamic = compileMutation('dyn({"a": 1})', 'ApplyConfiguration');
    assert.ok(typeof dynamic === 'object');
    const value = dynamic.program.evaluate({}).value;
    assert.throws(() => dynamic.read(value), /unsupported return type from ApplyConfiguration expression/);
  });
});
