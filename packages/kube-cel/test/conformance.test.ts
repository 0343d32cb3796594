// The CEL specification's conformance tests, every section the Kubernetes environment has the features
// of, run on the matchConditions environment. A case passes, or is excluded by design (with its reason,
// conformance-exclusions.ts), or is a known difference still to fix (conformance-known.ts): a known
// difference that starts passing fails the test until it is taken off the list.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { conformanceCases, KUBERNETES_SECTIONS, passes, runConformance } from './conformance-suite.ts';
import { EXCLUDED, exclusionOf } from './conformance-exclusions.ts';
import { KNOWN_DIFFERENCES } from './conformance-known.ts';
import { KUBERNETES_ANSWERS } from './conformance-kubernetes.ts';
import { matchConditions } from './engines.ts';

const cases = conformanceCases();

describe('CEL conformance (matchConditions environment)', () => {
  it('finds every section the Kubernetes environment uses in the conformance data', () => {
    const present = new Set(cases.map((c) => c.section));
    for (const section of KUBERNETES_SECTIONS) assert.ok(present.has(section), section);
    // Guards the loader: a data package that no longer reads would pass everything vacuously.
    assert.ok(cases.length > 2000, `${cases.length} cases`);
  });

  it('lists only known differences that exist in the data', () => {
    const paths = new Set(cases.map((c) => c.path));
    const stale = Object.keys(KNOWN_DIFFERENCES).filter((p) => !paths.has(p));
    assert.deepEqual(stale, []);
  });

  for (const section of KUBERNETES_SECTIONS) {
    it(section, () => {
      const inSection = cases.filter((c) => c.section === section && !exclusionOf(c));
      const { failed } = runConformance(matchConditions, inSection);
      const unexpected = [...failed].filter(([path]) => !(path in KNOWN_DIFFERENCES));
      assert.deepEqual(
        unexpected.map(([path, outcome]) => `${path}: ${JSON.stringify(outcome)}`),
        [],
        'cases that fail and are not known differences',
      );
      const fixed = inSection.filter((c) => c.path in KNOWN_DIFFERENCES && !failed.has(c.path)).map((c) => c.path);
      assert.deepEqual(fixed, [], 'known differences that now pass: take them off conformance-known.ts');
    });
  }

  it("answers as Kubernetes' cel-go where Kubernetes differs from the specification", () => {
    const answers = Object.keys(KUBERNETES_ANSWERS).map((path) => {
      const c = cases.find((x) => x.path === path);
      assert.ok(c, `no case ${path}`);
      return [path, matchConditions.run(c)];
    });
    assert.deepEqual(Object.fromEntries(answers), KUBERNETES_ANSWERS);
  });

  it('excludes by reasons, each applying to some case', () => {
    const used = EXCLUDED.filter((e) => cases.some((c) => e.applies(c)));
    assert.equal(used.length, EXCLUDED.length);
  });

  it('compares answers strictly (a wrong value fails)', () => {
    const c = cases.find((x) => x.path === 'basic/self_eval_nonzeroish/self_eval_int_nonzero')!;
    assert.ok(passes(c, matchConditions.run(c)));
    assert.equal(passes(c, { value: 'i43' }), false);
    assert.equal(passes(c, { error: 'x', stage: 'eval' }), false);
  });
});
