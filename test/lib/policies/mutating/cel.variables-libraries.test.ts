// Mutations reading values of the Kubernetes libraries (IP, quantity, semver, URL) through
// `variables` without naming the libraries' functions: evaluated natively, served from Lambda, and
// compiled without the type check (each expression then compiles in an environment of only the
// parts it needs), each after a policy of the same mutations whose variables hold plain values
// (its environments there to be reused). The
// answers are cel-go's: the libraries' equality (apiserver pkg/cel ip.go, quantity.go, semver.go,
// url.go: addresses, amounts, versions apart from build metadata, the URLs' texts).
import { describe, it } from 'node:test';
import { forgetDeclaredEnvironments } from '../../../../packages/kube-cel/src/evaluate/declared.ts';
import { apply, check, checkWebhook, deployment, jsonPatch, type Row, run } from './rows.ts';

const replicas = (n: number) => deployment({ replicas: n });

const ROWS: Row[] = [
  {
    name: 'JSONPatch: equal IPs',
    variables: [
      { name: 'a', expression: "ip('10.0.0.1')" },
      { name: 'b', expression: "ip('10.0.0.1')" },
    ],
    mutations: [
      jsonPatch('[JSONPatch{op: "replace", path: "/spec/replicas", value: variables.a == variables.b ? 2 : 3}]'),
    ],
    object: replicas(1),
    want: replicas(2),
  },
  {
    name: 'ApplyConfiguration: quantities of one amount',
    variables: [
      { name: 'a', expression: "quantity('1')" },
      { name: 'b', expression: "quantity('1000m')" },
    ],
    mutations: [apply('Object{ spec: Object.spec{ replicas: variables.a == variables.b ? 2 : 3 } }')],
    object: replicas(1),
    want: replicas(2),
  },
  {
    name: 'ApplyConfiguration: a semver in a variable of variables',
    variables: [
      { name: 'a', expression: "semver('1.2.3')" },
      { name: 'b', expression: "semver('1.2.3+b')" },
      { name: 'c', expression: '[variables.a]' },
    ],
    mutations: [apply('Object{ spec: Object.spec{ replicas: variables.b in variables.c ? 2 : 3 } }')],
    object: replicas(1),
    want: replicas(2),
  },
  {
    name: 'JSONPatch: a URL not null',
    variables: [{ name: 'a', expression: "url('https://example.com/a')" }],
    mutations: [jsonPatch('[JSONPatch{op: "replace", path: "/spec/replicas", value: variables.a != null ? 2 : 3}]')],
    object: replicas(1),
    want: replicas(2),
  },
];

/** The row with plain values in place of the library values (variables reading variables kept). */
const plain = (row: Row): Row => ({
  ...row,
  name: `${row.name} (plain)`,
  variables: row.variables!.map((v) => (v.expression.includes('variables') ? v : { ...v, expression: 'dyn(1)' })),
  want: undefined,
});

describe('library values through variables in mutations', () => {
  for (const row of ROWS) {
    it(row.name, () => check(row));
    it(`${row.name}: compiled without the type check`, () => {
      // Without the environments the type-checked compiles built (any of them covers every part).
      forgetDeclaredEnvironments();
      run(plain(row), { typeCheck: false });
      check(row, { typeCheck: false });
    });
    it(`${row.name}: served from Lambda, as native`, async () => {
      await checkWebhook(plain(row));
      await checkWebhook(row);
    });
  }
});
