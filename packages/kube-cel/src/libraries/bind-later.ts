/**
 * The Kubernetes CEL libraries of later versions as the API server declares them: sets (1.29), ip and
 * cidr (1.30), format (1.31), semver (1.33), lists version 3 (1.34). Which version has which is
 * versions.ts's: compileExpression refuses what the chosen version lacks.
 */
import { type Environment, Optional } from '../engine.ts';
import { FORMATS, formatNamed, type NamedFormat } from './format.ts';
import { CidrPrefix, cidr, cidrContainsCIDRString, cidrContainsIPString, isCIDR } from './cidr.ts';
import { ip, IpAddr, ipIsCanonical, isIP } from './ip.ts';
import * as k8sLists from './lists.ts';
import { isSemver, Semver, semver } from './semver.ts';
import { type CelEquals, setsContains, setsEquivalent, setsIntersects } from './sets.ts';
import { celEquals as engineEquals, type Engine } from '../evaluate/equality.ts';
import { Namespace, ORDERING } from './bind.ts';
import { RENAMED } from '../check/messages.ts';

class SetsNamespace extends Namespace {}
class ListsNamespace extends Namespace {}
class IpNamespace extends Namespace {}
class FormatNamespace extends Namespace {}
const SETS_NS = 'kubernetes.lib.sets';
const LISTS_NS = 'kubernetes.lib.lists';
const IP_NS = 'kubernetes.lib.ip';
const FORMAT_NS = 'kubernetes.lib.format';
const IP = 'net.IP';
const CIDR = 'net.CIDR';
const FORMAT = 'kubernetes.NamedFormat';
const SEMVER = 'kubernetes.Semver';
/** A named format as a CEL value (`format.dns1123Label()`). */
class FormatValue {
  constructor(readonly format: NamedFormat) {}
}

/** Sets (k8s.io/apiserver/pkg/cel/library/sets.go), from 1.29. */
export function registerSets(env: Environment): void {
  env
    .registerType(SETS_NS, SetsNamespace)
    .registerConstant('sets', SETS_NS, new SetsNamespace())
    .registerFunction(`${SETS_NS}.contains(list<A>, list<A>): bool`, function (this: Engine, _: Namespace, a, b) {
      return setsContains(a as unknown[], b as unknown[], equalsIn(this));
    })
    .registerFunction(`${SETS_NS}.equivalent(list<A>, list<A>): bool`, function (this: Engine, _: Namespace, a, b) {
      return setsEquivalent(a as unknown[], b as unknown[], equalsIn(this));
    })
    .registerFunction(`${SETS_NS}.intersects(list<A>, list<A>): bool`, function (this: Engine, _: Namespace, a, b) {
      return setsIntersects(a as unknown[], b as unknown[], equalsIn(this));
    });
}

/** CEL equality as the `==` of the evaluator running a library function (its `this`): uints and all. */
const equalsIn =
  (ev: Engine): CelEquals =>
  (a, b) =>
    engineEquals(ev, a, b);

/** IP and CIDR (library/ip.go, cidr.go), from 1.30. */
export function registerIpAndCidr(env: Environment): void {
  env
    .registerType(IP, IpAddr)
    .registerType(CIDR, CidrPrefix)
    .registerType(IP_NS, IpNamespace)
    .registerConstant('ip', IP_NS, new IpNamespace())
    .registerFunction(`ip(string): ${IP}`, ip)
    .registerFunction('isIP(string): bool', isIP)
    .registerFunction(`${IP_NS}.isCanonical(string): bool`, (_: Namespace, v: string) => ipIsCanonical(v))
    .registerFunction(`${IP}.family(): int`, (a: IpAddr) => a.family())
    .registerFunction(`${IP}.isUnspecified(): bool`, (a: IpAddr) => a.isUnspecified())
    .registerFunction(`${IP}.isLoopback(): bool`, (a: IpAddr) => a.isLoopback())
    .registerFunction(`${IP}.isLinkLocalMulticast(): bool`, (a: IpAddr) => a.isLinkLocalMulticast())
    .registerFunction(`${IP}.isLinkLocalUnicast(): bool`, (a: IpAddr) => a.isLinkLocalUnicast())
    .registerFunction(`${IP}.isGlobalUnicast(): bool`, (a: IpAddr) => a.isGlobalUnicast())
    .registerFunction(`string${RENAMED}(${IP}): string`, (a: IpAddr) => a.toString())
    .registerOperator(`${IP} == ${IP}`, (a: IpAddr, b: IpAddr) => a.equals(b))
    .registerFunction(`cidr(string): ${CIDR}`, cidr)
    .registerFunction('isCIDR(string): bool', isCIDR)
    .registerFunction(`${CIDR}.containsIP(string): bool`, cidrContainsIPString)
    .registerFunction(`${CIDR}.containsIP(${IP}): bool`, (c: CidrPrefix, a: IpAddr) => c.containsIP(a))
    .registerFunction(`${CIDR}.containsCIDR(string): bool`, cidrContainsCIDRString)
    .registerFunction(`${CIDR}.containsCIDR(${CIDR}): bool`, (c: CidrPrefix, o: CidrPrefix) => c.containsCIDR(o))
    .registerFunction(`${CIDR}.ip(): ${IP}`, (c: CidrPrefix) => c.ip())
    .registerFunction(`${CIDR}.masked(): ${CIDR}`, (c: CidrPrefix) => c.masked())
    .registerFunction(`${CIDR}.prefixLength(): int`, (c: CidrPrefix) => c.prefixLength())
    .registerFunction(`string${RENAMED}(${CIDR}): string`, (c: CidrPrefix) => c.toString())
    .registerOperator(`${CIDR} == ${CIDR}`, (a: CidrPrefix, b: CidrPrefix) => a.equals(b));
  // The type names `net.IP` and `net.CIDR`, as cel-go declares them (`type(ip(s)) == net.IP`).
  env.registerConstant('net', 'map<string, type>', {
    IP: env.evaluate("type(ip('0.0.0.0'))"),
    CIDR: env.evaluate("type(cidr('0.0.0.0/0'))"),
  });
}

/** Format (library/format.go), from 1.31: `format.<name>()`, `format.named(name)`, `validate`. */
export function registerFormat(env: Environment): void {
  env
    .registerType(FORMAT, FormatValue)
    .registerType(FORMAT_NS, FormatNamespace)
    .registerConstant('format', FORMAT_NS, new FormatNamespace());
  for (const name of Object.keys(FORMATS)) {
    env.registerFunction(`${FORMAT_NS}.${name}(): ${FORMAT}`, () => new FormatValue(FORMATS[name]!));
  }
  env
    .registerFunction(`${FORMAT_NS}.named(string): optional<${FORMAT}>`, (_: Namespace, name: string) => {
      const f = formatNamed(name);
      return f ? Optional.of(new FormatValue(f)) : Optional.none();
    })
    .registerOperator(`${FORMAT} == ${FORMAT}`, (a: FormatValue, b: FormatValue) => a.format === b.format)
    .registerFunction(`${FORMAT}.validate(string): optional<list<string>>`, (f: FormatValue, v: string) => {
      const errors = f.format.validate(v);
      return errors ? Optional.of(errors) : Optional.none();
    });
}

/** Semver (library/semverlib.go), from 1.33. */
export function registerSemver(env: Environment): void {
  env
    .registerType(SEMVER, Semver)
    .registerFunction(`semver(string): ${SEMVER}`, (v: string) => semver(v))
    .registerFunction(`semver(string, bool): ${SEMVER}`, semver)
    .registerFunction('isSemver(string): bool', (v: string) => isSemver(v))
    .registerFunction('isSemver(string, bool): bool', isSemver)
    .registerFunction(`${SEMVER}.major(): int`, (v: Semver) => v.major())
    .registerFunction(`${SEMVER}.minor(): int`, (v: Semver) => v.minor())
    .registerFunction(`${SEMVER}.patch(): int`, (v: Semver) => v.patch())
    .registerFunction(`${SEMVER}.isLessThan(${SEMVER}): bool`, (a: Semver, b: Semver) => a.compareTo(b) < 0)
    .registerFunction(`${SEMVER}.isGreaterThan(${SEMVER}): bool`, (a: Semver, b: Semver) => a.compareTo(b) > 0)
    .registerFunction(`${SEMVER}.compareTo(${SEMVER}): int`, (a: Semver, b: Semver) => BigInt(a.compareTo(b)))
    .registerOperator(`${SEMVER} == ${SEMVER}`, (a: Semver, b: Semver) => a.equals(b));
}

/** Lists version 3 (cel-go ext.Lists), from 1.34 (slice is in registerLists). */
export function registerListsV3(env: Environment): void {
  env
    .registerType(LISTS_NS, ListsNamespace)
    .registerConstant('lists', LISTS_NS, new ListsNamespace())
    .registerFunction(`${LISTS_NS}.range(int): list<int>`, (_: Namespace, n: bigint) => k8sLists.range(n))
    .registerFunction('list<A>.reverse(): list<A>', (l: unknown[]) => k8sLists.reverse(l))
    .registerFunction('list<A>.distinct(): list<A>', function (this: Engine, l: unknown[]) {
      return k8sLists.distinct(l, equalsIn(this));
    })
    .registerFunction('list<dyn>.flatten(): list<dyn>', (l: unknown[]) => k8sLists.flatten(l))
    .registerFunction('list<dyn>.flatten(int): list<dyn>', (l: unknown[], depth: bigint) => k8sLists.flatten(l, depth))
    .registerFunction('list<A>.sort(): list<A>', (l: unknown[]) => k8sLists.sort(l, ORDERING));
}
