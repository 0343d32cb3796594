// A seeded random differential test of the matchConditions environment. Expressions are generated
// from a fixed list of seeds (plus CEL_DIFF_SEED, to vary them locally) and checked two ways:
// base-language expressions against @bufbuild/cel, an independent engine that passes the CEL
// conformance tests; and Kubernetes library expressions against rules whose answer is known
// (identities and round trips), over realistic admission requests. Deterministic and bounded:
// every seed generates the same expressions, a fixed number of them.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { celEnv, isCelError, isCelList, parse, plan } from '@bufbuild/cel';
import { compileExpression, isCompileError, loadPrecompiled, precompile } from '../../packages/kube-cel/src/compile.ts';
import { variablesFor } from '../../lib/matchconditions/variables.ts';
import { admissionReview } from '../../lib/testing/index.ts';
import { type Seeded, seeded } from '../../packages/kube-cel/test/seeded.ts';

/** The seeds every run uses; CEL_DIFF_SEED adds one. */
const SEEDS = [1, 7, 42, 1234, 99_991, ...(process.env.CEL_DIFF_SEED ? [Number(process.env.CEL_DIFF_SEED)] : [])];
/** Expressions generated per seed and kind: enough to reach every rule, few enough to run in a second. */
const PER_SEED = 150;

// ---- base language, against @bufbuild/cel ----

const lit = (s: string): string => JSON.stringify(s);

/** An int expression of depth at most `d`. */
function intExpr(r: Seeded, d: number): string {
  if (d <= 0 || r.int(3) === 0) return r.pick(['0', '1', '2', '3', '7', '-4', '100', '9223372036854775807']);
  switch (r.int(7)) {
    case 0:
      return `(${intExpr(r, d - 1)} ${r.pick(['+', '-', '*'])} ${intExpr(r, d - 1)})`;
    case 1:
      return `(${intExpr(r, d - 1)} ${r.pick(['/', '%'])} ${intExpr(r, d - 1)})`;
    case 2:
      return `size(${strExpr(r, d - 1)})`;
    case 3:
      return `(${boolExpr(r, d - 1)} ? ${intExpr(r, d - 1)} : ${intExpr(r, d - 1)})`;
    case 4:
      return `size([${intExpr(r, d - 1)}, ${intExpr(r, d - 1)}])`;
    case 5:
      return `[${intExpr(r, d - 1)}, ${intExpr(r, d - 1)}][${r.int(3)}]`;
    default:
      return `-${intExpr(r, d - 1)}`;
  }
}

/** A string expression of depth at most `d`. */
function strExpr(r: Seeded, d: number): string {
  if (d <= 0 || r.int(3) === 0) return lit(r.pick(['', 'a', 'kube', 'system', 'Ab-9', 'x.y.z']));
  switch (r.int(3)) {
    case 0:
      return `(${strExpr(r, d - 1)} + ${strExpr(r, d - 1)})`;
    case 1:
      return `(${boolExpr(r, d - 1)} ? ${strExpr(r, d - 1)} : ${strExpr(r, d - 1)})`;
    default:
      return `string(${intExpr(r, d - 1)})`;
  }
}

/** A bool expression of depth at most `d`. */
function boolExpr(r: Seeded, d: number): string {
  if (d <= 0 || r.int(4) === 0) return r.pick(['true', 'false']);
  switch (r.int(8)) {
    case 0:
      return `(${boolExpr(r, d - 1)} ${r.pick(['&&', '||'])} ${boolExpr(r, d - 1)})`;
    case 1:
      return `!${boolExpr(r, d - 1)}`;
    case 2:
      return `(${intExpr(r, d - 1)} ${r.pick(['<', '<=', '==', '!=', '>', '>='])} ${intExpr(r, d - 1)})`;
    case 3:
      return `(${strExpr(r, d - 1)} ${r.pick(['<', '==', '!=', '>='])} ${strExpr(r, d - 1)})`;
    case 4:
      return `${strExpr(r, d - 1)}.${r.pick(['contains', 'startsWith', 'endsWith'])}(${strExpr(r, d - 1)})`;
    case 5:
      return `(${intExpr(r, d - 1)} in [${intExpr(r, d - 1)}, ${intExpr(r, d - 1)}])`;
    case 6:
      return `[${intExpr(r, d - 1)}, ${intExpr(r, d - 1)}].${r.pick(['all', 'exists', 'exists_one'])}(x, x > ${intExpr(r, d - 1)})`;
    default:
      return `${strExpr(r, d - 1)}.matches(${lit(r.pick(['^a', 'b$', '[0-9]+', '^$', 's.s']))})`;
  }
}

/** A value as text both engines' results compare by; errors are `error`. */
function canonical(v: unknown): string {
  if (typeof v === 'bigint') return `i${v}`;
  if (typeof v === 'string' || typeof v === 'boolean' || typeof v === 'number') return JSON.stringify(v);
  if (Array.isArray(v)) return `[${v.map(canonical).join(',')}]`;
  if (isCelList(v)) return `[${[...v].map(canonical).join(',')}]`;
  return `?${String(v)}`;
}

function ours(expr: string): string {
  const compiled = compileExpression(expr);
  if (isCompileError(compiled)) return `compile: ${compiled.message.split('\n')[0]}`;
  try {
    return canonical(compiled.run({}));
  } catch {
    return 'error';
  }
}

/** @bufbuild/cel's standard environment, made once: planning reads it and changes nothing in it. */
const THEIR_ENV = celEnv();

function theirs(expr: string): string {
  const result = plan(THEIR_ENV, parse(expr))();
  return isCelError(result) ? 'error' : canonical(result);
}

describe('base language against @bufbuild/cel', () => {
  for (const seed of SEEDS) {
    it(`seed ${seed}: ${PER_SEED} expressions answer alike`, () => {
      const r = seeded(seed);
      const differ: string[] = [];
      for (let i = 0; i < PER_SEED; i++) {
        const expr = r.pick([intExpr, strExpr, boolExpr])(r, 4);
        const [a, b] = [ours(expr), theirs(expr)];
        if (a !== b) differ.push(`${expr}: here ${a}, @bufbuild/cel ${b}`);
      }
      assert.deepEqual(differ, []);
    });
  }
});

// ---- Kubernetes libraries, against rules with known answers ----

const SUFFIXES = ['', 'm', 'k', 'M', 'G', 'Ki', 'Mi', 'Gi', 'Ti', 'e3', 'E-2', 'n', 'u'];
const quantity = (r: Seeded): string =>
  `${r.pick(['', '-', '+'])}${r.int(2000)}${r.int(3) === 0 ? `.${r.int(1000)}` : ''}${r.pick(SUFFIXES)}`;
const intList = (r: Seeded): string => `[${Array.from({ length: r.int(6) }, () => r.int(5)).join(', ')}]`;
const word = (r: Seeded): string =>
  Array.from({ length: r.int(8) }, () => r.pick(['a', 'b', 'Z', '-', '.', '0', '9', 'é', '😀', ' '])).join('');
const ipv4 = (r: Seeded): string => Array.from({ length: 4 }, () => r.int(256)).join('.');
const ipv6 = (r: Seeded): string => Array.from({ length: 8 }, () => r.int(65536).toString(16)).join(':');
const label = (r: Seeded): string =>
  Array.from({ length: 1 + r.int(10) }, () => r.pick(['a', 'z', '0', '-', '.', 'A', '_'])).join('');

/** Rules: each gives an expression over generated inputs that must be true. */
const RULES: Array<(r: Seeded) => string> = [
  (r) => {
    const q = lit(quantity(r));
    return `quantity(${q}).compareTo(quantity(${q})) == 0 && isQuantity(${q})`;
  },
  (r) => {
    const [a, b] = [lit(quantity(r)), lit(quantity(r))];
    return `quantity(${a}).add(quantity(${b})).sub(quantity(${b})) == quantity(${a})`;
  },
  (r) => {
    const [a, b] = [lit(quantity(r)), lit(quantity(r))];
    return `quantity(${a}).compareTo(quantity(${b})) == -quantity(${b}).compareTo(quantity(${a})) && quantity(${a}).isLessThan(quantity(${b})) == (quantity(${a}).compareTo(quantity(${b})) < 0)`;
  },
  (r) => {
    const [a, b] = [intList(r), intList(r)];
    return `sets.equivalent(${a}, ${b}) == (sets.contains(${a}, ${b}) && sets.contains(${b}, ${a}))`;
  },
  (r) => {
    const [a, b] = [intList(r), intList(r)];
    return `sets.contains(${a}, ${b}) == ${b}.all(x, x in ${a}) && sets.intersects(${a}, ${b}) == ${a}.exists(x, x in ${b})`;
  },
  (r) => {
    const [s, sep] = [lit(word(r)), lit(r.pick([',', 'a', '-', '😀', ' ']))];
    return `${s}.split(${sep}).join(${sep}) == ${s} && ${s}.lowerAscii().size() == ${s}.size()`;
  },
  (r) => {
    const [s, t] = [lit(word(r)), lit(Array.from(word(r)).slice(0, 2).join(''))];
    return `!${s}.contains(${t}) || (${s}.indexOf(${t}) <= ${s}.lastIndexOf(${t}) && ${s}.substring(${s}.indexOf(${t})).startsWith(${t}))`;
  },
  (r) => {
    const s = lit(word(r));
    return `${s}.replace('a', 'a') == ${s} && ${s}.size() == ${s}.split('').size() && ${s}.trim().size() <= ${s}.size()`;
  },
  (r) => {
    const l = intList(r);
    return `${l}.reverse().reverse() == ${l} && ${l}.sort().isSorted() && ${l}.distinct().size() <= size(${l}) && sets.equivalent(${l}.distinct(), ${l})`;
  },
  (r) => {
    const l = intList(r);
    return `${l}.slice(0, size(${l})) == ${l} && lists.range(size(${l})).size() == size(${l}) && ${l}.sum() == ${l}.reverse().sum()`;
  },
  (r) => {
    const a = lit(r.int(2) ? ipv4(r) : ipv6(r));
    return `ip(${a}).family() in [4, 6] && ip.isCanonical(string(ip(${a}))) && ip(string(ip(${a}))) == ip(${a}) && isIP(${a})`;
  },
  (r) => {
    const v4 = r.int(2) === 0;
    const c = lit(`${v4 ? ipv4(r) : ipv6(r)}/${r.int(v4 ? 33 : 129)}`);
    // A prefix contains itself only when masked: the library compares the other's address unmasked.
    return `cidr(${c}).containsIP(cidr(${c}).ip()) && cidr(${c}).masked().containsCIDR(cidr(${c}).masked()) && cidr(${c}).containsCIDR(cidr(${c})) == (cidr(${c}) == cidr(${c}).masked()) && cidr(${c}).prefixLength() == cidr(${c}).masked().prefixLength()`;
  },
  (r) => {
    const [ma, mi, pa] = [r.int(30), r.int(30), r.int(30)];
    const v = lit(`${ma}.${mi}.${pa}`);
    return `semver(${v}).compareTo(semver(${v})) == 0 && semver(${v}).major() == ${ma} && semver(${v}).minor() == ${mi} && semver(${v}).patch() == ${pa}`;
  },
  (r) => {
    const s = lit(label(r));
    return `format.dns1123Label().validate(${s}).hasValue() == !${s}.matches('^[a-z0-9]([-a-z0-9]*[a-z0-9])?$')`;
  },
  (r) => {
    const s = lit(label(r));
    return `format.labelValue().validate(${s}).hasValue() == !${s}.matches('^(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?$')`;
  },
  // Over the request: what the object holds, read through the libraries.
  () => `object.metadata.labels.all(k, object.metadata.labels[k].size() == size(object.metadata.labels[k]))`,
  () =>
    `sets.contains(object.spec.containers.map(c, c.name), [object.spec.containers[0].name]) && object.spec.containers.all(c, quantity(c.resources.limits.memory).compareTo(quantity(c.resources.limits.memory)) == 0)`,
  () => `request.namespace.split('-').join('-') == request.namespace && request.name == object.metadata.name`,
];

/** A Pod CREATE with generated names, labels and memory limits. */
function request(r: Seeded) {
  const labels = Object.fromEntries(Array.from({ length: r.int(5) }, () => [label(r), word(r)]));
  const containers = Array.from({ length: 1 + r.int(4) }, (_, i) => ({
    name: `c${i}`,
    resources: { limits: { memory: quantity(r).replace(/^[-+]/, '') } },
  }));
  const name = `web-${r.int(1000)}`;
  const pod = { apiVersion: 'v1', kind: 'Pod', metadata: { name, labels }, spec: { containers } };
  return admissionReview(pod, { namespace: `team-${r.int(50)}-prod`, name }).request!;
}

describe('Kubernetes libraries against known answers', () => {
  for (const seed of SEEDS) {
    it(`seed ${seed}: ${PER_SEED} expressions over generated requests are true`, () => {
      const r = seeded(seed);
      const differ: string[] = [];
      for (let i = 0; i < PER_SEED; i++) {
        const expr = RULES[i % RULES.length]!(r);
        const compiled = compileExpression(expr);
        if (isCompileError(compiled)) {
          differ.push(`${expr}: ${compiled.message.split('\n')[0]}`);
          continue;
        }
        try {
          const got = compiled.run(variablesFor(request(r)));
          if (got !== true) differ.push(`${expr}: ${String(got)}`);
        } catch (err) {
          // A generated quantity may not parse or not fit (asInteger, add): the rule holds vacuously
          // only where the API server would also fail, which quantity's own cases cover.
          if (!/quantit|suffix|overflow/.test((err as Error).message))
            differ.push(`${expr}: ${(err as Error).message}`);
        }
      }
      assert.deepEqual(differ, []);
    });
  }
});

// ---- precompiled forms, against the expressions compiled when used ----

/** An evaluation's value or error and its cost, as text. */
function answer(run: () => { value: unknown; cost: number }): string {
  try {
    const { value, cost } = run();
    return `${canonical(value)} cost ${cost}`;
  } catch (err) {
    return `error ${(err as Error).message} cost ${(err as { cost?: number }).cost}`;
  }
}

describe('precompiled forms against the expressions compiled when used', () => {
  for (const seed of SEEDS) {
    it(`seed ${seed}: base and library expressions answer alike, with the same cost`, () => {
      const r = seeded(seed);
      const differ: string[] = [];
      for (let i = 0; i < PER_SEED; i++) {
        const expr = i % 2 ? RULES[i % RULES.length]!(r) : r.pick([intExpr, strExpr, boolExpr])(r, 4);
        const variables = variablesFor(request(r));
        const runtime = compileExpression(expr, { typeCheck: false });
        const form = precompile(expr);
        if (isCompileError(runtime)) {
          if (form) differ.push(`${expr}: a form for what does not compile`);
          continue;
        }
        const loaded = form && loadPrecompiled(JSON.parse(JSON.stringify(form)));
        if (!loaded) {
          differ.push(`${expr}: no form loaded`);
          continue;
        }
        const [a, b] = [answer(() => loaded.evaluate(variables)), answer(() => runtime.evaluate(variables))];
        if (a !== b) differ.push(`${expr}: precompiled ${a}, compiled ${b}`);
      }
      assert.deepEqual(differ, []);
    });
  }
});
