import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { cidr, cidrContainsCIDRString, cidrContainsIPString, isCIDR } from './cidr.ts';
import { goParseAddr, ip, ipIsCanonical, isIP } from './ip.ts';

const error = (message: string) => (err: Error) => err.name === 'NetError' && err.message === message;

describe('ip library on Go netip', () => {
  // Canonical form and predicates, as Go's netip answers them (checked against Go).
  const addrs: Array<[string, string, string]> = [
    // input, canonical, flags: u(nspecified) l(oopback) m(link-local multicast) k(link-local unicast) g(lobal unicast)
    ['192.168.0.1', '192.168.0.1', 'g'],
    ['0.0.0.0', '0.0.0.0', 'u'],
    ['255.255.255.255', '255.255.255.255', ''],
    ['127.0.0.1', '127.0.0.1', 'l'],
    ['224.0.0.1', '224.0.0.1', 'm'],
    ['224.0.1.1', '224.0.1.1', ''],
    ['169.254.169.254', '169.254.169.254', 'k'],
    ['10.0.0.1', '10.0.0.1', 'g'],
    ['::', '::', 'u'],
    ['::1', '::1', 'l'],
    ['2001:db8::abcd', '2001:db8::abcd', 'g'],
    ['2001:0db8:0000:0000:0000:0000:0000:0001', '2001:db8::1', 'g'],
    ['2001:db8:0:0:1:0:0:1', '2001:db8::1:0:0:1', 'g'],
    ['2001:db8:0:1:1:1:1:1', '2001:db8:0:1:1:1:1:1', 'g'],
    ['0:0:0:0:0:0:0:1', '::1', 'l'],
    ['ff02::1', 'ff02::1', 'm'],
    ['ff12::1', 'ff12::1', 'm'],
    ['fd00::1', 'fd00::1', 'g'],
    ['fe80::1', 'fe80::1', 'k'],
    ['febf::1', 'febf::1', 'k'],
    ['fec0::1', 'fec0::1', 'g'],
    ['ff00::1', 'ff00::1', ''],
    ['1:2:3:4:5:6:1.2.3.4', '1:2:3:4:5:6:102:304', 'g'],
    ['::1.2.3.4', '::102:304', 'g'],
    ['FE80::A', 'fe80::a', 'k'],
  ];
  for (const [input, canonical, flags] of addrs) {
    it(`${input} → ${canonical} [${flags}]`, () => {
      const a = ip(input);
      assert.equal(a.toString(), canonical);
      assert.equal(a.family(), input.includes(':') ? 6n : 4n);
      assert.equal(a.isUnspecified(), flags.includes('u'));
      assert.equal(a.isLoopback(), flags.includes('l'));
      assert.equal(a.isLinkLocalMulticast(), flags.includes('m'));
      assert.equal(a.isLinkLocalUnicast(), flags.includes('k'));
      assert.equal(a.isGlobalUnicast(), flags.includes('g'));
      assert.equal(isIP(input), true);
      assert.equal(ipIsCanonical(input), input === canonical);
    });
  }

  const refused: Array<[string, string]> = [
    ['01.2.3.4', 'IPv4 field has octet with leading zero'],
    ['1.2.3.256', 'IPv4 field has value >255'],
    ['1.2.3', 'IPv4 address too short'],
    ['1.2.3.4.5', 'IPv4 address too long'],
    ['1..2.3', 'IPv4 field must have at least one digit (at ".2.3")'],
    ['1.2.3.', 'IPv4 field must have at least one digit (at ".")'],
    ['1.2.3.4%eth0', 'unexpected character (at "%eth0")'],
    ['fe80::1%', 'zone must be a non-empty string'],
    ['%eth0', 'missing IPv6 address'],
    ['1:2:3:4:5:6:7:8:9', 'trailing garbage after address (at "9")'],
    ['1:2:3:4:5:6:7::8', 'the :: must expand to at least one field of zeros'],
    ['12345::', 'each group must have 4 or less digits (at "12345::")'],
    ['1::2::3', 'multiple :: in address (at ":3")'],
    ['1:', 'colon must be followed by more characters (at ":")'],
    [':1', 'each colon-separated field must have at least one digit (at ":1")'],
    ['1:2:3:4:5:1.2.3.4', 'embedded IPv4 address must replace the final 2 fields of the address (at "1.2.3.4")'],
    ['abc', 'unable to parse IP'],
    ['', 'unable to parse IP'],
    ['1.2.3.4/24', 'unexpected character (at "/24")'],
  ];
  for (const [input, reason] of refused) {
    it(`refuses ${JSON.stringify(input)}`, () => {
      const q = JSON.stringify(input);
      assert.throws(
        () => ip(input),
        error(`IP Address ${q} parse error during conversion from string: ParseAddr(${q}): ${reason}`),
      );
      assert.equal(isIP(input), false);
      assert.throws(() => ipIsCanonical(input), /parse error during conversion from string/);
    });
  }

  it('refuses zones and IPv4-mapped addresses that netip accepts', () => {
    assert.equal(goParseAddr('fe80::1%eth0').zone, 'eth0');
    assert.throws(() => ip('fe80::1%eth0'), error('IP address "fe80::1%eth0" with zone value is not allowed'));
    assert.equal(goParseAddr('::ffff:1.2.3.4').is4In6(), true);
    assert.throws(() => ip('::ffff:1.2.3.4'), error('IPv4-mapped IPv6 address "::ffff:1.2.3.4" is not allowed'));
    assert.throws(() => ip('::ffff:0102:0304'), error('IPv4-mapped IPv6 address "::ffff:0102:0304" is not allowed'));
    assert.equal(isIP('::ffff:1.2.3.4'), false);
  });

  it('compares addresses', () => {
    assert.ok(ip('2001:db8::1').equals(ip('2001:0db8::0001')));
    assert.ok(!ip('10.0.0.1').equals(ip('10.0.0.2')));
  });
});

describe('cidr library on Go netip', () => {
  // k8s.io/apiserver pkg/cel/library cidr tests, as function calls.
  it('parses and reads prefixes', () => {
    assert.equal(cidr('192.168.0.0/24').toString(), '192.168.0.0/24');
    assert.equal(cidr('192.168.0.0/24').ip().toString(), '192.168.0.0');
    assert.equal(cidr('192.168.0.0/24').prefixLength(), 24n);
    assert.ok(cidr('192.168.0.1/24').masked().equals(cidr('192.168.0.0/24')));
    assert.ok(!cidr('192.168.0.1/24').equals(cidr('192.168.0.0/24')));
    assert.equal(cidr('192.168.0.1/24').ip().toString(), '192.168.0.1');
    assert.ok(cidr('2001:db8:1::/32').masked().equals(cidr('2001:db8::/32')));
    assert.equal(cidr('2001:db8::/32').prefixLength(), 32n);
    assert.equal(cidr('10.0.0.1/0').masked().toString(), '0.0.0.0/0');
    assert.equal(cidr('::/0').toString(), '::/0');
  });

  it('answers containsIP and containsCIDR', () => {
    assert.equal(cidr('192.168.0.0/24').containsIP(ip('192.168.0.1')), true);
    assert.equal(cidr('192.168.0.0/24').containsIP(ip('192.168.1.1')), false);
    assert.equal(cidrContainsIPString(cidr('192.168.0.0/24'), '192.168.0.1'), true);
    assert.equal(cidrContainsIPString(cidr('192.168.0.0/24'), '192.168.1.1'), false);
    assert.equal(cidr('192.168.0.0/24').containsCIDR(cidr('192.168.0.0/25')), true);
    assert.equal(cidr('192.168.0.0/24').containsCIDR(cidr('192.168.0.0/23')), false);
    assert.equal(cidrContainsCIDRString(cidr('192.168.0.0/24'), '192.168.0.0/25'), true);
    assert.equal(cidrContainsCIDRString(cidr('192.168.0.0/24'), '192.168.0.0/23'), false);
    assert.equal(cidr('2001:db8::/32').containsIP(ip('2001:db8::1')), true);
    assert.equal(cidr('2001:db8::/32').containsIP(ip('2001:dc8::1')), false);
    assert.equal(cidr('2001:db8::/32').containsCIDR(cidr('2001:db8::/33')), true);
    assert.equal(cidr('2001:db8::/32').containsCIDR(cidr('2001:db8::/31')), false);
    // An unmasked prefix still contains its addresses; the other family never.
    assert.equal(cidr('192.168.0.7/24').containsIP(ip('192.168.0.200')), true);
    assert.equal(cidr('0.0.0.0/0').containsIP(ip('::1')), false);
    // The library compares the other prefix's address with its host bits kept.
    assert.equal(cidr('10.0.0.0/8').containsCIDR(cidr('10.0.0.0/16')), true);
    assert.equal(cidr('10.0.0.0/8').containsCIDR(cidr('10.1.0.0/16')), false);
  });

  it('gives the library messages for what it refuses', () => {
    const twice =
      'network address parse error during conversion from string: network address parse error during ' +
      'conversion from string:';
    assert.throws(
      () => cidr('192.168.0.0/'),
      error(`${twice} netip.ParsePrefix("192.168.0.0/"): bad bits after slash: ""`),
    );
    assert.throws(
      () => cidr('2001:db8::/'),
      error(`${twice} netip.ParsePrefix("2001:db8::/"): bad bits after slash: ""`),
    );
    assert.throws(() => cidr('10.0.0.1'), error(`${twice} netip.ParsePrefix("10.0.0.1"): no '/'`));
    assert.throws(
      () => cidr('10.0.0.1/33'),
      error(`${twice} netip.ParsePrefix("10.0.0.1/33"): prefix length out of range`),
    );
    assert.throws(
      () => cidr('10.0.0.1/08'),
      error(`${twice} netip.ParsePrefix("10.0.0.1/08"): bad bits after slash: "08"`),
    );
    assert.throws(
      () => cidr('10.0.0.1/-1'),
      error(`${twice} netip.ParsePrefix("10.0.0.1/-1"): bad bits after slash: "-1"`),
    );
    assert.throws(
      () => cidr('fe80::1%eth0/64'),
      error(`${twice} netip.ParsePrefix("fe80::1%eth0/64"): IPv6 zones cannot be present in a prefix`),
    );
    assert.throws(
      () => cidr('1.2.3/8'),
      error(`${twice} netip.ParsePrefix("1.2.3/8"): ParseAddr("1.2.3"): IPv4 address too short`),
    );
    assert.throws(
      () => cidr('::ffff:1.2.3.4/120'),
      error(
        'network address parse error during conversion from string: IPv4-mapped IPv6 address ' +
          '"::ffff:1.2.3.4/120" is not allowed',
      ),
    );
    assert.equal(isCIDR('10.0.0.0/8'), true);
    assert.equal(isCIDR('10.0.0.0'), false);
    assert.equal(isCIDR('::ffff:1.2.3.4/120'), false);
    assert.throws(() => cidrContainsIPString(cidr('10.0.0.0/8'), 'nope'), error('no such overload'));
    assert.throws(() => cidrContainsCIDRString(cidr('10.0.0.0/8'), 'nope'), /no '\/'/);
  });

  it('parses a 1 MB non-address in one pass', () => {
    assert.equal(isIP('1'.repeat(1_000_000)), false);
    assert.equal(isCIDR(`${'1:'.repeat(500_000)}/8`), false);
    assert.equal(isIP(`::${'%'.repeat(1_000_000)}`), false);
  });
});
