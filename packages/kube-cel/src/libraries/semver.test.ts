import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { isSemver, semver } from './semver.ts';

const error = (message: string) => (err: Error) => err.name === 'SemverError' && err.message === message;

describe('semver library on blang/semver', () => {
  it('accepts strict semver only without normalization', () => {
    assert.equal(isSemver('1.0.0'), true);
    assert.equal(isSemver('1.0.0-alpha.1+build.5'), true);
    assert.equal(isSemver('v1.0.0'), false);
    assert.equal(isSemver('1.0'), false);
    assert.equal(isSemver('01.0.0'), false);
    assert.equal(isSemver('1.0.0 '), false);
  });

  it('normalizes a leading v, short versions and leading zeros when asked', () => {
    assert.equal(isSemver('v1.0', true), true);
    assert.ok(semver('1.0', true).equals(semver('1.0.0')));
    assert.ok(semver('v1', true).equals(semver('1.0.0')));
    assert.equal(semver('01.01.01', true).toString(), '1.1.1');
    assert.equal(semver('1.0.00-rc', true).toString(), '1.0.0-rc');
    assert.throws(() => semver('1.0.000rc', true), error('Invalid character(s) found in patch number "0rc"'));
    assert.throws(() => semver('1.0-alpha', true), error('short version cannot contain PreRelease/Build meta data'));
    assert.throws(() => semver('vv1.0.0', true), error('Invalid character(s) found in major number "0v1"'));
  });

  it('reads the parts', () => {
    const v = semver('1.2.3');
    assert.deepEqual([v.major(), v.minor(), v.patch()], [1n, 2n, 3n]);
    // A uint64 above int64 wraps as Go converts it.
    assert.equal(semver('18446744073709551615.0.0').major(), -1n);
  });

  it('orders by semver precedence, build metadata ignored', () => {
    assert.equal(semver('1.2.3').compareTo(semver('1.2.3')), 0);
    assert.equal(semver('1.2.3').compareTo(semver('2.0.0')), -1);
    assert.equal(semver('1.2.3').compareTo(semver('0.1.2')), 1);
    const ordered = [
      '1.0.0-alpha',
      '1.0.0-alpha.1',
      '1.0.0-alpha.beta',
      '1.0.0-beta',
      '1.0.0-beta.2',
      '1.0.0-beta.11',
      '1.0.0-rc.1',
      '1.0.0',
    ];
    for (let i = 0; i + 1 < ordered.length; i++) {
      assert.equal(semver(ordered[i]!).compareTo(semver(ordered[i + 1]!)), -1, `${ordered[i]} < ${ordered[i + 1]}`);
      assert.equal(semver(ordered[i + 1]!).compareTo(semver(ordered[i]!)), 1);
    }
    assert.ok(semver('1.0.0+a').equals(semver('1.0.0+b')));
    assert.equal(semver('10.0.0').compareTo(semver('9.0.0')), 1);
  });

  it('refuses with blang/semver messages', () => {
    assert.throws(() => semver(''), error('Version string empty'));
    assert.throws(() => semver('1.0'), error('No Major.Minor.Patch elements found'));
    assert.throws(() => semver('a.0.0'), error('Invalid character(s) found in major number "a"'));
    assert.throws(() => semver('01.0.0'), error('Major number must not contain leading zeroes "01"'));
    assert.throws(() => semver('1.01.0'), error('Minor number must not contain leading zeroes "01"'));
    assert.throws(() => semver('1.0.01'), error('Patch number must not contain leading zeroes "01"'));
    assert.throws(() => semver('1.0.x'), error('Invalid character(s) found in patch number "x"'));
    assert.throws(() => semver('1..0'), error('strconv.ParseUint: parsing "": invalid syntax'));
    assert.throws(
      () => semver('99999999999999999999.0.0'),
      error('strconv.ParseUint: parsing "99999999999999999999": value out of range'),
    );
    assert.throws(() => semver('1.0.0-'), error('Prerelease is empty'));
    assert.throws(() => semver('1.0.0-a..b'), error('Prerelease is empty'));
    assert.throws(() => semver('1.0.0+'), error('Build meta data is empty'));
    assert.throws(() => semver('1.0.0-01'), error('Numeric PreRelease version must not contain leading zeroes "01"'));
    assert.throws(() => semver('1.0.0-a_b'), error('Invalid character(s) found in prerelease "a_b"'));
    assert.throws(() => semver('1.0.0+a_b'), error('Invalid character(s) found in build meta data "a_b"'));
  });

  it('parses a 1 MB prerelease in one pass', () => {
    const v = semver(`1.0.0-${'a.'.repeat(500_000)}b`);
    assert.equal(v.pre.length, 500_001);
    assert.equal(v.compareTo(semver(`1.0.0-${'a.'.repeat(500_000)}c`)), -1);
  });
});
