// Kubernetes' own cases for its quantity, ip and cidr CEL libraries, restated: the expression and
// the API server's answer, with the error messages its libraries give.
import { describe, it } from 'node:test';
import { checkAll, compile, error, same, value, type Case } from '../../test/k8s-cases.ts';

const t = true;
const f = false;

/** [expression, answer] rows as cases. */
const rows = (list: Array<[string, ReturnType<typeof value>]>): Case[] =>
  list.map(([expr, expect]) => ({ expr, expect }));

describe('quantity library (Kubernetes 1.28+)', () => {
  it('parses as apimachinery does, with its messages', () => {
    checkAll(
      rows([
        ['quantity("12Mi") == quantity("12582912")', value(t)],
        ['quantity("10Mo")', error(/^quantities must match the regular expression/)],
        ['quantity("10Mm")', error("unable to parse quantity's suffix")],
        ['isQuantity("20")', value(t)],
        ['isQuantity("20M")', value(t)],
        ['isQuantity("20Mi")', value(t)],
        ['isQuantity("20Mo")', value(f)],
        ['isQuantity("10Mm")', value(f)],
      ]),
    );
  });

  it('compares by value: equality is reflexive, symmetric and transitive across suffixes', () => {
    checkAll(
      rows([
        ['quantity("200M") == quantity("200M")', value(t)],
        ['quantity("200M") == quantity("0.2G") && quantity("0.2G") == quantity("200M")', value(t)],
        [
          'quantity("2M") == quantity("0.002G") && quantity("2000k") == quantity("2M") && quantity("0.002G") == quantity("2000k")',
          value(t),
        ],
        ['quantity("200M") == quantity("0.3G")', value(f)],
        ['quantity("50M").isLessThan(quantity("50Mi"))', value(t)],
        ['quantity("50M").isLessThan(quantity("100M"))', value(t)],
        ['quantity("100M").isLessThan(quantity("50M"))', value(f)],
        ['quantity("50Mi").isGreaterThan(quantity("50M"))', value(t)],
        ['quantity("150Mi").isGreaterThan(quantity("100Mi"))', value(t)],
        ['quantity("50M").isGreaterThan(quantity("100M"))', value(f)],
        ['quantity("200M").compareTo(quantity("0.2G"))', value(0n)],
        ['quantity("50M").compareTo(quantity("50Mi"))', value(-1n)],
        ['quantity("50Mi").compareTo(quantity("50M"))', value(1n)],
      ]),
    );
  });

  it('adds and subtracts quantities and ints', () => {
    checkAll(
      rows([
        ['quantity("50k").add(quantity("20")) == quantity("50.02k")', value(t)],
        ['quantity("50k").add(20).isLessThan(quantity("50020"))', value(f)],
        ['quantity("50k").sub(quantity("20")) == quantity("49.98k")', value(t)],
        ['quantity("50k").sub(20) == quantity("49980")', value(t)],
        ['quantity("50k").add(20).sub(quantity("100k")).asInteger()', value(-49980n)],
        ['quantity("50k").add(20).sub(quantity("100k")).sub(-50000).asInteger()', value(20n)],
      ]),
    );
  });

  it('converts to integers and floats, refusing what does not fit', () => {
    checkAll(
      rows([
        ['quantity("50k").asInteger()', value(50000n)],
        ['quantity("9999999999999999999999999999999999999G").asInteger()', error(/cannot convert value to integer/)],
        ['quantity("9999999999999999999999999999999999999G").isInteger()', value(f)],
        ['quantity("50").isInteger()', value(t)],
        ['quantity("50.703k").asApproximateFloat()', value(50703)],
      ]),
    );
  });

  it('has no multiplication or division in the versions modelled', () => {
    checkAll(
      rows([
        ['quantity("50k").mul(2) == quantity("100000")', compile(/mul/)],
        ['quantity("10k").div(2) == quantity("5000")', compile(/div/)],
        ['quantity("10000").divInt(3) == quantity("3333")', compile(/divInt/)],
      ]),
    );
  });

  it('is not declared before 1.28', () => {
    checkAll([{ expr: 'quantity("1") == quantity("1")', minor: 27, expect: compile(/quantity/) }]);
  });
});

const ipError = (text: string, detail: string) =>
  error(`IP Address "${text}" parse error during conversion from string: ParseAddr("${text}"): ${detail}`);
const cidrError = (text: string, detail: string) =>
  error(
    'network address parse error during conversion from string: network address parse error during ' +
      `conversion from string: netip.ParsePrefix("${text}"): ${detail}`,
  );

describe('ip library (Kubernetes 1.30+)', () => {
  it('parses, classifies and prints IPv4 addresses', () => {
    checkAll(
      rows([
        ['ip("192.168.0.1")', same('ip("192.168.0.1")')],
        ['ip("192.168.0.1.0")', ipError('192.168.0.1.0', 'IPv4 address too long')],
        ['isIP("192.168.0.1")', value(t)],
        ['isIP("192.168.0.1.0")', value(f)],
        ['ip.isCanonical("127.0.0.1")', value(t)],
        ['ip.isCanonical("127.0.0.1.0")', ipError('127.0.0.1.0', 'IPv4 address too long')],
        ['ip("192.168.0.1").family()', value(4n)],
        ['ip("0.0.0.0").isUnspecified()', value(t)],
        ['ip("127.0.0.1").isUnspecified()', value(f)],
        ['ip("127.0.0.1").isLoopback()', value(t)],
        ['ip("1.2.3.4").isLoopback()', value(f)],
        ['ip("224.0.0.1").isLinkLocalMulticast()', value(t)],
        ['ip("224.0.1.1").isLinkLocalMulticast()', value(f)],
        ['ip("169.254.169.254").isLinkLocalUnicast()', value(t)],
        ['ip("192.168.0.1").isLinkLocalUnicast()', value(f)],
        ['ip("192.168.0.1").isGlobalUnicast()', value(t)],
        ['ip("255.255.255.255").isGlobalUnicast()', value(f)],
        ['string(ip("192.168.0.1"))', value('192.168.0.1')],
        ['type(ip("192.168.0.1")) == net.IP', value(t)],
      ]),
    );
  });

  it('parses, classifies and prints IPv6 addresses', () => {
    const colons = 'each colon-separated field must have at least one digit (at ":68")';
    checkAll(
      rows([
        ['ip("2001:db8::68")', same('ip("2001:db8::68")')],
        ['ip("2001:db8:::68")', ipError('2001:db8:::68', colons)],
        ['isIP("2001:db8::68")', value(t)],
        ['isIP("2001:db8:::68")', value(f)],
        ['ip.isCanonical("2001:db8::68")', value(t)],
        ['ip.isCanonical("2001:DB8::68")', value(f)],
        ['ip.isCanonical("2001:db8:::68")', ipError('2001:db8:::68', colons)],
        ['ip("2001:db8::68").family()', value(6n)],
        ['ip("::").isUnspecified()', value(t)],
        ['ip("::1").isUnspecified()', value(f)],
        ['ip("::1").isLoopback()', value(t)],
        ['ip("2001:db8::abcd").isLoopback()', value(f)],
        ['ip("ff02::1").isLinkLocalMulticast()', value(t)],
        ['ip("fd00::1").isLinkLocalMulticast()', value(f)],
        ['ip("fe80::1").isLinkLocalUnicast()', value(t)],
        ['ip("fd80::1").isLinkLocalUnicast()', value(f)],
        ['ip("2001:db8::abcd").isGlobalUnicast()', value(t)],
        ['ip("ff00::1").isGlobalUnicast()', value(f)],
      ]),
    );
  });
});

describe('cidr library (Kubernetes 1.30+)', () => {
  it('parses IPv4 prefixes and answers containment', () => {
    checkAll(
      rows([
        ['cidr(dyn("192.168.0.0/24"))', same('cidr("192.168.0.0/24")')],
        ['cidr("192.168.0.0/")', cidrError('192.168.0.0/', 'bad bits after slash: ""')],
        ['cidr("192.168.0.0/24").containsIP(ip("192.168.0.1"))', value(t)],
        ['cidr("192.168.0.0/24").containsIP(ip("192.168.1.1"))', value(f)],
        ['cidr("192.168.0.0/24").containsIP("192.168.0.1")', value(t)],
        ['cidr("192.168.0.0/24").containsIP("192.168.1.1")', value(f)],
        ['cidr("192.168.0.0/24").containsCIDR(cidr("192.168.0.0/25"))', value(t)],
        ['cidr("192.168.0.0/24").containsCIDR(cidr("192.168.0.0/23"))', value(f)],
        ['cidr("192.168.0.0/24").containsCIDR("192.168.0.0/25")', value(t)],
        ['cidr("192.168.0.0/24").containsCIDR("192.168.0.0/23")', value(f)],
        ['cidr("192.168.0.0/24").ip()', same('ip("192.168.0.0")')],
        ['cidr("192.168.0.0/24").masked()', same('cidr("192.168.0.0/24")')],
        ['cidr("192.168.0.1/24").masked()', same('cidr("192.168.0.0/24")')],
        ['cidr("192.168.0.0/24").prefixLength()', value(24n)],
        ['string(cidr("192.168.0.0/24"))', value('192.168.0.0/24')],
        ['type(cidr("192.168.0.0/24")) == net.CIDR', value(t)],
      ]),
    );
  });

  it('parses IPv6 prefixes and answers containment', () => {
    checkAll(
      rows([
        ['cidr("2001:db8::/32")', same('cidr("2001:db8::/32")')],
        ['cidr("2001:db8::/")', cidrError('2001:db8::/', 'bad bits after slash: ""')],
        ['cidr("2001:db8::/32").containsIP(ip("2001:db8::1"))', value(t)],
        ['cidr("2001:db8::/32").containsIP(ip("2001:dc8::1"))', value(f)],
        ['cidr("2001:db8::/32").containsIP("2001:db8::1")', value(t)],
        ['cidr("2001:db8::/32").containsIP("2001:dc8::1")', value(f)],
        ['cidr("2001:db8::/32").containsCIDR(cidr("2001:db8::/33"))', value(t)],
        ['cidr("2001:db8::/32").containsCIDR(cidr("2001:db8::/31"))', value(f)],
        ['cidr("2001:db8::/32").containsCIDR("2001:db8::/33")', value(t)],
        ['cidr("2001:db8::/32").containsCIDR("2001:db8::/31")', value(f)],
        ['cidr("2001:db8::/32").ip()', same('ip("2001:db8::")')],
        ['cidr("2001:db8::/32").masked()', same('cidr("2001:db8::/32")')],
        ['cidr("2001:db8:1::/32").masked()', same('cidr("2001:db8::/32")')],
        ['cidr("2001:db8::/32").prefixLength()', value(32n)],
        ['cidr("2001:db8:1::/32") == cidr("2001:db8::/32")', value(f)],
      ]),
    );
  });

  it('is not declared before 1.30', () => {
    checkAll([
      { expr: 'isIP("1.2.3.4")', minor: 29, expect: compile(/isIP/) },
      { expr: 'isCIDR("1.2.3.0/24")', minor: 29, expect: compile(/isCIDR/) },
      { expr: 'isCIDR("1.2.3.0/24")', minor: 30, expect: value(t) },
    ]);
  });
});

// The checker's words for a call no overload accepts, and for an undeclared function, are cel-go's.
describe('compile error messages in cel-go words', () => {
  it('names the function and the argument types as cel-go does', () => {
    checkAll(
      rows([
        ['isQuantity([1, 2, 3])', compile(/found no matching overload for 'isQuantity' applied to '\(list\(int\)\)'/)],
        ['isIP(cidr("192.168.0.0/24"))', compile(/found no matching overload for 'isIP' applied to '\(net\.CIDR\)'/)],
        ['cidr(192168)', compile(/found no matching overload for 'cidr' applied to '\(int\)'/)],
        ['quantity("50k").mul(2) == quantity("100000")', compile(/undeclared reference to 'mul' \(in container ''\)/)],
      ]),
    );
  });
});
