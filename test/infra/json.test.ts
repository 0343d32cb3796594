// The narrowing readers of parsed documents: a path of members, never a throw on a wrong shape.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { isRecord, stringAt, valueAt } from '../../infra/json.ts';

describe('reading a parsed document', () => {
  const doc = JSON.parse('{"provider": {"region": "eu-west-1", "tags": ["a"], "n": 3}, "__proto__": {"x": "y"}}');

  it('reads a path of members, and undefined where one is missing or its holder is no object', () => {
    assert.equal(stringAt(doc, 'provider', 'region'), 'eu-west-1');
    assert.deepEqual(valueAt(doc, 'provider', 'tags'), ['a']);
    assert.equal(stringAt(doc, 'provider', 'n'), undefined, 'a number is no string');
    assert.equal(valueAt(doc, 'provider', 'tags', '0'), undefined, 'an array has no members here');
    assert.equal(valueAt(doc, 'missing', 'region'), undefined);
    for (const wrong of [null, undefined, 'text', 3, [], [{ provider: {} }]])
      assert.equal(valueAt(wrong, 'provider', 'region'), undefined, String(wrong));
    assert.equal(valueAt(doc), doc);
  });

  it('reads own members only: nothing from the prototype, a "__proto__" member as data', () => {
    assert.equal(valueAt({}, 'toString'), undefined);
    assert.equal(stringAt(doc, '__proto__', 'x'), 'y');
    assert.ok(isRecord({}) && !isRecord([]) && !isRecord(null) && !isRecord('x'));
  });
});
