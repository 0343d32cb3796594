import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import {
  annotationsProblem,
  isDns1123Label,
  isDns1123Subdomain,
  isQualifiedNamePart,
  labelsProblem,
  labelValueProblem,
} from '../../../lib/k8s/names.ts';

describe('Kubernetes name rules', () => {
  it('tells DNS-1123 labels and subdomains', () => {
    for (const good of ['a', 'pod-policy', '0x', 'a'.repeat(63)]) assert.ok(isDns1123Label(good), good);
    for (const bad of ['', 'A', '-a', 'a-', 'a.b', 'a_b', 'a'.repeat(64)])
      assert.equal(isDns1123Label(bad), false, bad);
    for (const good of ['a', 'example.com', 'a-b.c-d', `${'a'.repeat(63)}.${'b'.repeat(63)}`])
      assert.ok(isDns1123Subdomain(good), good);
    for (const bad of ['', 'Example.com', 'a..b', '.a', 'a.', `${'a.'.repeat(126)}ab`])
      assert.equal(isDns1123Subdomain(bad), false, bad);
  });

  it('tells name parts of qualified names', () => {
    for (const good of ['would-deny', 'A.b_c-1', 'x']) assert.ok(isQualifiedNamePart(good), good);
    for (const bad of ['', 'a/b', '_a', 'a.', 'x'.repeat(64)]) assert.equal(isQualifiedNamePart(bad), false, bad);
  });

  it('takes label values that are empty or name parts of at most 63 characters', () => {
    for (const good of ['', 'v1', 'A_b.c-D', 'v'.repeat(63)]) assert.equal(labelValueProblem(good), undefined, good);
    assert.match(labelValueProblem('v'.repeat(64))!, /no more than 63/);
    for (const bad of ['-a', 'a-', 'a b', 'é']) assert.match(labelValueProblem(bad)!, /alphanumeric/, bad);
  });

  it('names the first bad key of a label map', () => {
    assert.equal(labelsProblem({ 'example.com/team': 'a', app: '' }), undefined);
    assert.match(labelsProblem({ ok: 'a', 'Example.com/team': 'a' })!, /^key "Example\.com\/team": prefix part/);
    assert.match(labelsProblem({ ok: 'a', team: 'a b' })!, /^value of key "team": must consist/);
  });

  it('takes annotation keys in any letter case and counts their size in UTF-8 bytes', () => {
    assert.equal(annotationsProblem({ 'Example.COM/Key': 'any\nvalue' }), undefined);
    assert.match(annotationsProblem({ 'a/b/c': '' })!, /^key "a\/b\/c": a qualified name/);
    assert.equal(annotationsProblem({ k: 'x'.repeat(256 * 1024 - 1) }), undefined);
    assert.match(annotationsProblem({ k: 'x'.repeat(256 * 1024) })!, /262145 bytes, more than 262144/);
    // Three bytes per character in UTF-8: over the limit with a third as many UTF-16 units.
    assert.match(annotationsProblem({ k: '\u20ac'.repeat(87382) })!, /262147 bytes/);
    assert.equal(annotationsProblem({ k: '\u20ac'.repeat(87381) }), undefined);
  });
});
