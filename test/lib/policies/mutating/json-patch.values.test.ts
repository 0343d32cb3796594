import { describe, it } from 'node:test';
import { check, checkWebhook, deployment, jsonPatch, type Row } from './rows.ts';

type Container = Record<string, unknown>;
/** A Deployment whose pod template has these containers (and init containers). */
const withContainers = (containers: Container[], initContainers?: Container[]) =>
  deployment({ template: { spec: { ...(initContainers ? { initContainers } : {}), containers } } });
const patchRow = (name: string, expression: string, object: Row['object'], want: Row['want']): Row => ({
  name,
  mutations: [jsonPatch(expression)],
  object,
  want,
});
const MAIN = { name: 'main-app', image: 'nginx:1.24' };
const INIT_1 = { name: 'init-1', image: 'alpine:3.18', command: ['echo', 'init1'] };
const INIT_2 = { name: 'init-2', image: 'alpine:3.18', command: ['echo', 'init2'] };
const STRUCTURED_1 =
  'Object.spec.template.spec.initContainers{name: "init-1", image: "alpine:3.18", command: ["echo", "init1"]}';
const STRUCTURED_2 =
  'Object.spec.template.spec.initContainers{name: "init-2", image: "alpine:3.18", command: ["echo", "init2"]}';
const UNSTRUCTURED = (name: string) => `{"name": "${name}", "image": "alpine:3.18"}`;
const addInit = (value: string) =>
  `[JSONPatch{op: "add", path: "/spec/template/spec/initContainers", value: ${value}}]`;
const COMPLEX_POD = {
  template: {
    spec: {
      containers: [{ name: 'a', image: 'nginx' }],
      affinity: {
        nodeAffinity: {
          requiredDuringSchedulingIgnoredDuringExecution: {
            nodeSelectorTerms: [{ matchExpressions: [{ key: 'foo', operator: 'In', values: ['bar', 'baz'] }] }],
          },
        },
      },
      tolerations: [{ key: 'taint', operator: 'Exists' }],
    },
  },
};
const requests = (cpu: string, memory: string) => ({ name: 'c1', resources: { requests: { cpu, memory } } });
const limited = (cpu: string, memory: string) => ({
  name: 'c1',
  resources: { requests: { cpu, memory }, limits: { cpu, memory } },
});

// Restated from k8s.io/apiserver pkg/admission/plugin/policy/mutating/patch/json_patch_test.go
// (TestJSONPatch): the rows whose values are read from the object or built in CEL.
const ROWS: Row[] = [
  patchRow(
    'JSONPatch patch type has field testing',
    `[JSONPatch{op: "add", path: "/metadata/labels", value: {
      "op": string(has(JSONPatch{op: "opValue"}.op)), "path": string(has(JSONPatch{path: "pathValue"}.path)),
      "from": string(has(JSONPatch{from: "fromValue"}.from)), "value": string(has(JSONPatch{value: "valueValue"}.value)),
      "op-unset": string(has(JSONPatch{}.op)), "path-unset": string(has(JSONPatch{}.path)),
      "from-unset": string(has(JSONPatch{}.from)), "value-unset": string(has(JSONPatch{}.value))}}]`,
    deployment({}, { name: 'd', labels: {} }),
    deployment(
      {},
      {
        name: 'd',
        labels: {
          op: 'true',
          path: 'true',
          from: 'true',
          value: 'true',
          'op-unset': 'false',
          'path-unset': 'false',
          'from-unset': 'false',
          'value-unset': 'false',
        },
      },
    ),
  ),
  patchRow(
    'jsonPatch with complex struct as value',
    '[JSONPatch{op: "add", path: "/spec/template/spec/containers/1", value: object.spec.template.spec.containers[0]}]',
    withContainers([{ name: 'a' }]),
    withContainers([{ name: 'a' }, { name: 'a' }]),
  ),
  patchRow(
    'jsonPatch with large complex struct as value',
    '[JSONPatch{op: "replace", path: "/spec/template/spec", value: object.spec.template.spec}]',
    deployment(COMPLEX_POD),
    deployment(COMPLEX_POD),
  ),
  patchRow(
    'jsonPatch with slice of complex struct as value',
    addInit('object.spec.template.spec.containers'),
    withContainers([{ name: 'a', image: 'nginx' }]),
    withContainers([{ name: 'a', image: 'nginx' }], [{ name: 'a', image: 'nginx' }]),
  ),
  patchRow(
    'jsonPatch with list concatenation operator',
    '[JSONPatch{op: "add", path: "/spec/template/spec/containers", value: object.spec.template.spec.containers + [object.spec.template.spec.containers[0]]}]',
    withContainers([{ name: 'a' }]),
    withContainers([{ name: 'a' }, { name: 'a' }]),
  ),
  patchRow(
    'jsonPatch with list concatenation using constant value',
    '[JSONPatch{op: "add", path: "/spec/template/spec/containers/0/args", value: object.spec.template.spec.containers[0].command + ["--debug", "-v"]}]',
    withContainers([{ name: 'c1', command: ['server', 'start'] }]),
    withContainers([{ name: 'c1', command: ['server', 'start'], args: ['server', 'start', '--debug', '-v'] }]),
  ),
  patchRow(
    'jsonPatch with list concatenation reading from other fields',
    '[JSONPatch{op: "replace", path: "/spec/template/spec/containers", value: object.spec.template.spec.initContainers + object.spec.template.spec.containers}]',
    withContainers([MAIN], [{ name: 'init-setup', image: 'busybox:1.36' }]),
    withContainers(
      [{ name: 'init-setup', image: 'busybox:1.36' }, MAIN],
      [{ name: 'init-setup', image: 'busybox:1.36' }],
    ),
  ),
  patchRow(
    'jsonPatch with list concatenation between unstructured object and typed type (unstructured + typed)',
    addInit(`[${UNSTRUCTURED('unstructured-init')}] + object.spec.template.spec.containers`),
    withContainers([MAIN]),
    withContainers([MAIN], [{ name: 'unstructured-init', image: 'alpine:3.18' }, MAIN]),
  ),
  patchRow(
    'jsonPatch with list concatenation between two unstructured objects (unstructured + unstructured)',
    addInit(`[${UNSTRUCTURED('unstructured-init1')}] + [${UNSTRUCTURED('unstructured-init2')}]`),
    withContainers([MAIN]),
    withContainers(
      [MAIN],
      [
        { name: 'unstructured-init1', image: 'alpine:3.18' },
        { name: 'unstructured-init2', image: 'alpine:3.18' },
      ],
    ),
  ),
  patchRow(
    'jsonPatch with list concatenation between typed type and structured object (typed + structured)',
    addInit(`object.spec.template.spec.containers + [${STRUCTURED_1}]`),
    withContainers([MAIN]),
    withContainers([MAIN], [MAIN, INIT_1]),
  ),
  patchRow(
    'jsonPatch with list concatenation between structured object and typed type (structured + typed)',
    addInit(`[${STRUCTURED_1}] + object.spec.template.spec.containers`),
    withContainers([MAIN]),
    withContainers([MAIN], [INIT_1, MAIN]),
  ),
  patchRow(
    'jsonPatch with list concatenation between two structured objects (structured + structured)',
    addInit(`[${STRUCTURED_1}] + [${STRUCTURED_2}]`),
    withContainers([MAIN]),
    withContainers([MAIN], [INIT_1, INIT_2]),
  ),
  patchRow(
    'jsonPatch with map key comprehension all predicate',
    '[JSONPatch{op: "add", path: "/metadata/labels/added", value: object.metadata.labels.all(k, k != "invalid") ? "true" : "false"}]',
    deployment({}, { name: 'd', labels: { env: 'prod', app: 'demo' } }),
    deployment({}, { name: 'd', labels: { env: 'prod', app: 'demo', added: 'true' } }),
  ),
  patchRow(
    'jsonPatch with map of resource quantities as value',
    `[JSONPatch{op: "add", path: "/spec/template/spec/containers/0/resources/limits", value: {
      "cpu": object.spec.template.spec.containers[0].resources.requests["cpu"],
      "memory": object.spec.template.spec.containers[0].resources.requests["memory"]}}]`,
    withContainers([requests('100m', '128Mi')]),
    withContainers([limited('100m', '128Mi')]),
  ),
  patchRow(
    'jsonPatch with slice of scalars as value',
    '[JSONPatch{op: "add", path: "/spec/template/spec/containers/0/args", value: object.spec.template.spec.containers[0].command}]',
    withContainers([{ name: 'c1', command: ['sh', '-c', 'echo hello'] }]),
    withContainers([{ name: 'c1', command: ['sh', '-c', 'echo hello'], args: ['sh', '-c', 'echo hello'] }]),
  ),
  patchRow(
    'jsonPatch with map of scalars as value',
    '[JSONPatch{op: "add", path: "/metadata/annotations", value: object.metadata.labels}]',
    deployment({}, { name: 'd', labels: { env: 'prod', tier: 'frontend' } }),
    deployment(
      {},
      { name: 'd', labels: { env: 'prod', tier: 'frontend' }, annotations: { env: 'prod', tier: 'frontend' } },
    ),
  ),
  patchRow(
    'jsonPatch with map of struct as value',
    '[JSONPatch{op: "add", path: "/spec/template/spec/containers/0/resources/limits", value: object.spec.template.spec.containers[0].resources.requests}]',
    withContainers([requests('250m', '512Mi')]),
    withContainers([limited('250m', '512Mi')]),
  ),
  patchRow(
    'jsonPatch with constant complex struct object as value',
    `[JSONPatch{op: "add", path: "/spec/template/spec/containers/1", value: Object.spec.template.spec.containers{
      name: "sidecar", image: "busybox:1.36", command: ["sh", "-c", "sleep 3600"],
      resources: Object.spec.template.spec.containers.resources{limits: {"cpu": "200m", "memory": "256Mi"}}}}]`,
    withContainers([MAIN]),
    withContainers([
      MAIN,
      {
        name: 'sidecar',
        image: 'busybox:1.36',
        command: ['sh', '-c', 'sleep 3600'],
        resources: { limits: { cpu: '200m', memory: '256Mi' } },
      },
    ]),
  ),
  patchRow(
    'jsonPatch with constant complex list of struct objects as value',
    addInit(`[${STRUCTURED_1}, ${STRUCTURED_2}]`),
    withContainers([MAIN]),
    withContainers([MAIN], [INIT_1, INIT_2]),
  ),
];

describe('JSON patch values read from the object or built in CEL (json_patch_test.go)', () => {
  for (const row of ROWS) {
    it(row.name, () => check(row));
    it(`${row.name}: served from Lambda, as native`, () => checkWebhook(row));
  }
});
