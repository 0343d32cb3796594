// klw-test: patches-builtins (workOf counts the steps of array iteration and callbacks)
// Hostile fleet files: thousands of keys (read in time linear in the file, a bounded number of
// problems printed), aliases of aliases, and kubeVersion values that are not Kubernetes versions.
// Linearity is shown by counting work (array elements visited), never by a clock.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import {
  FLEET_FILE,
  FLEET_FILE_MAX_BYTES,
  FleetFileError,
  MAX_PROBLEMS_SHOWN,
  parseFleet,
  type KnownFunctions,
} from '../../../infra/fleet/file.ts';

const functions: KnownFunctions = [{ name: 'pod-policy', type: 'validating' }];

/**
 * The array elements visited while `run` runs: by for-of and spread, by the callback methods,
 * and by the searches (whose whole length is counted). A loop over every key for every key
 * makes this grow with the square of the file; one pass, in proportion to it.
 */
function workOf(run: () => void): number {
  let visits = 0;
  const proto = Array.prototype as unknown as Record<string | symbol, (...args: unknown[]) => unknown>;
  const saved = new Map<string | symbol, (...args: unknown[]) => unknown>();
  const iterate = proto[Symbol.iterator]!;
  saved.set(Symbol.iterator, iterate);
  class Counted {
    constructor(private inner: Iterator<unknown>) {}
    next() {
      visits++;
      return this.inner.next();
    }
    [Symbol.iterator]() {
      return this;
    }
  }
  proto[Symbol.iterator] = function (this: unknown[]) {
    return new Counted(iterate.call(this) as Iterator<unknown>);
  };
  for (const name of ['some', 'every', 'find', 'findIndex', 'filter', 'forEach', 'map', 'reduce']) {
    const original = proto[name]!;
    saved.set(name, original);
    // The wrapper is passed as it is made, not named: a named one would be renamed by the
    // TypeScript loader at each call, costing more than the parse it counts.
    proto[name] = function (this: unknown[], callback: unknown, ...rest: unknown[]) {
      if (typeof callback !== 'function') return original.call(this, callback, ...rest);
      const f = callback as (...a: unknown[]) => unknown;
      return original.call(
        this,
        (a: unknown, b: unknown, c: unknown, d: unknown) => (visits++, f(a, b, c, d)),
        ...rest,
      );
    };
  }
  for (const name of ['includes', 'indexOf', 'lastIndexOf']) {
    const original = proto[name]!;
    saved.set(name, original);
    proto[name] = function (this: unknown[], ...args: unknown[]) {
      visits += this.length;
      return original.apply(this, args);
    };
  }
  try {
    run();
  } finally {
    for (const [name, original] of saved) proto[name] = original;
  }
  return visits;
}

/** The files the probe generated, by how many keys they hold. */
const HOSTILE: Record<string, (n: number) => string> = {
  'unknown keys in a cluster': (n) =>
    `clusters:\n  - name: a\n${Array.from({ length: n }, (_, i) => `    k${i}: 1\n`).join('')}`,
  'unknown keys at the top': (n) =>
    `clusters:\n  - name: a\n${Array.from({ length: n }, (_, i) => `k${i}: 1\n`).join('')}`,
  'one key repeated': (n) => `clusters:\n  - name: a\n${'    context: x\n'.repeat(n)}`,
  'enforcement of unknown functions': (n) =>
    `clusters:\n  - name: a\n    enforcement:\n${Array.from({ length: n }, (_, i) => `      f${i}: Deny\n`).join('')}`,
  'labels that are not strings': (n) =>
    `clusters:\n  - name: a\n    labels:\n${Array.from({ length: n }, (_, i) => `      l${i}: ${i}\n`).join('')}`,
};

function refusal(text: string): FleetFileError {
  try {
    parseFleet(text, FLEET_FILE, functions);
  } catch (err) {
    assert.ok(err instanceof FleetFileError, String(err));
    return err;
  }
  assert.fail('accepted');
}

describe('a fleet file of many keys', () => {
  for (const [kind, make] of Object.entries(HOSTILE)) {
    it(`${kind}: the work grows with the file, not with its square`, () => {
      const small = workOf(() => refusal(make(500)));
      const large = workOf(() => refusal(make(4_000)));
      // Eight times the keys: about eight times the work in one pass, sixty-four in a pass per key.
      assert.ok(large < small * 12, `${kind}: ${small} visits for 500 keys, ${large} for 4,000`);
    });
  }

  it('reports every problem, each with its line, and prints the first few and how many more', () => {
    const err = refusal(HOSTILE['unknown keys in a cluster']!(5_000));
    assert.equal(err.problems.length, 5_000);
    assert.deepEqual(
      err.problems.slice(0, 2).map((p) => [p.path, p.line]),
      [
        ['clusters[0].k0', 3],
        ['clusters[0].k1', 4],
      ],
    );
    assert.equal(err.problems.at(-1)!.line, 5_002);
    const lines = err.message.split('\n');
    assert.equal(lines.length, MAX_PROBLEMS_SHOWN + 1);
    assert.match(lines[0]!, /^clusters\.yaml:3: clusters\[0\]\.k0: unknown key "k0"; a cluster has only name,/);
    assert.equal(
      lines.at(-1),
      `clusters.yaml: and ${5_000 - MAX_PROBLEMS_SHOWN} more problems; correct these first, then run again`,
    );
    assert.ok(err.message.length < 4_000, `${err.message.length} characters printed`);
  });

  it('names each repeated key, its line and the line it first appeared on', () => {
    const err = refusal('clusters:\n  - name: a\n    context: x\n    labels: {}\n    context: y\n    context: z\n');
    assert.deepEqual(
      err.problems.map((p) => [p.path, p.line, p.message]),
      [
        ['clusters[0].context', 5, 'not valid YAML: the key "context" is repeated (first on line 3)'],
        ['clusters[0].context', 6, 'not valid YAML: the key "context" is repeated (first on line 3)'],
      ],
    );
    assert.match(err.message, /^clusters\.yaml:5: clusters\[0\]\.context: .*; keep one of them$/m);
    // Repeated in a flow mapping, and at the top.
    assert.equal(refusal('clusters:\n  - { name: a, name: b }\n').problems[0]!.path, 'clusters[0].name');
    assert.equal(refusal('clusters: []\nclusters: []\n').problems[0]!.line, 2);
  });

  it('reads a file of the largest size allowed, all of it keys, in one pass', () => {
    const line = (i: number) => `k${i.toString(36)}: 1\n`;
    let text = 'clusters:\n  - name: a\n';
    const keys: string[] = [];
    for (let i = 0; text.length + line(i).length <= FLEET_FILE_MAX_BYTES; i++) {
      keys.push(line(i));
      text += line(i);
    }
    assert.ok(keys.length > 100_000, `${keys.length} keys`);
    let err: FleetFileError | undefined;
    const work = workOf(() => {
      err = refusal(text);
    });
    assert.equal(err!.problems.length, keys.length);
    // A pass per key would visit billions of elements; one pass visits some hundred per key.
    assert.ok(work < keys.length * 1_000, `${work} visits for ${keys.length} keys`);
  });
});

describe('aliases of aliases (a billion laughs)', () => {
  it('are refused naming the file, the line of the first alias and the fix', () => {
    let bomb = 'a: &a [x, x, x, x, x, x, x, x, x, x]\n';
    for (let i = 0; i < 8; i++) {
      const [from, to] = [String.fromCharCode(97 + i), String.fromCharCode(98 + i)];
      bomb += `${to}: &${to} [${Array.from({ length: 10 }, () => `*${from}`).join(', ')}]\n`;
    }
    const err = refusal(`clusters:\n  - name: a\n${bomb}`);
    assert.equal(err.problems.length, 1);
    const [p] = err.problems;
    assert.equal(p!.line, 4);
    assert.match(p!.message, /aliases \(\*name\) expand past 100 copies/);
    assert.match(
      err.message,
      /^clusters\.yaml:4: \(top\): .*; write the settings out, or use fewer aliases of aliases$/,
    );
  });

  it('a few aliases are read as before', () => {
    const fleet = parseFleet(
      'clusters:\n  - name: a\n    labels: &l { env: prod }\n  - name: b\n    labels: *l\n',
      FLEET_FILE,
      functions,
    );
    assert.deepEqual(
      fleet.clusters.map((c) => c.labels),
      [{ env: 'prod' }, { env: 'prod' }],
    );
  });
});

describe('kubeVersion', () => {
  const version = (v: string) => `clusters:\n  - name: a\n    kubeVersion: "${v}"\n`;

  it('refuses values that are not Kubernetes versions, rather than rounding or rewriting them', () => {
    const cases: Array<[string, RegExp]> = [
      ['1.99999999999999999999', /minor version is 0 to 99/],
      ['1.9007199254740993', /minor version is 0 to 99/],
      ['1.100', /minor version is 0 to 99/],
      ['1.029', /without leading zeros/],
      ['2.0', /every Kubernetes release is 1\.x/],
      ['99.1', /every Kubernetes release is 1\.x/],
      ['01.29', /every Kubernetes release is 1\.x/],
      ['v1.29.00000000000000000001', /patch version is 0 to 999/],
      ['1.29.', /is not a Kubernetes version$/],
      [' 1.29', /is not a Kubernetes version$/],
    ];
    for (const [text, why] of cases) {
      const err = refusal(version(text));
      assert.equal(err.problems.length, 1, text);
      const [p] = err.problems;
      assert.equal(p!.path, 'clusters[0].kubeVersion', text);
      assert.equal(p!.line, 3, text);
      assert.ok(p!.message.startsWith(JSON.stringify(text)), p!.message);
      assert.match(p!.message, why, text);
      assert.match(p!.fix, /as kubectl version shows it: "1\.29" or "v1\.29\.3"/);
    }
  });

  it('accepts real versions, their digits kept as written', () => {
    for (const [text, kept] of [
      ['1.16', '1.16'],
      ['1.29', '1.29'],
      ['v1.27.3', '1.27'],
      ['1.35.0', '1.35'],
      ['1.99', '1.99'],
    ]) {
      const fleet = parseFleet(version(text!), FLEET_FILE, functions);
      assert.equal(fleet.clusters[0]!.kubeVersion!.text, kept, text);
    }
  });
});
