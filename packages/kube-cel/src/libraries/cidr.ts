/**
 * Kubernetes' cidr CEL library (from 1.30), on Go's net/netip prefixes: the same parser and
 * messages, the same canonical strings, and the library's own refusals with its messages.
 */
import { goQuote } from './go.ts';
import { goParseAddr, IpAddr, ip, NetError } from './ip.ts';

/** A prefix as netip.Prefix holds it: an address (host bits kept) and a length. */
export class CidrPrefix {
  constructor(
    readonly addr: IpAddr,
    readonly bits: number,
  ) {}

  /** `prefixLength()`. */
  prefixLength(): bigint {
    return BigInt(this.bits);
  }

  /** `ip()`: the address as written, host bits included. */
  ip(): IpAddr {
    return this.addr;
  }

  /** `masked()`: host bits cleared. */
  masked(): CidrPrefix {
    const bytes = Uint8Array.from(this.addr.bytes);
    for (let i = 0; i < bytes.length; i++) {
      const keep = Math.max(0, Math.min(8, this.bits - i * 8));
      bytes[i]! &= (0xff << (8 - keep)) & 0xff;
    }
    return new CidrPrefix(new IpAddr(bytes, this.addr.zone), this.bits);
  }

  /** netip's Prefix.Contains: same family, no zone, first `bits` bits equal. */
  contains(addr: IpAddr): boolean {
    if (addr.zone !== '' || addr.bytes.length !== this.addr.bytes.length) return false;
    for (let i = 0; i * 8 < this.bits; i++) {
      const keep = Math.min(8, this.bits - i * 8);
      const mask = (0xff << (8 - keep)) & 0xff;
      if ((addr.bytes[i]! & mask) !== (this.addr.bytes[i]! & mask)) return false;
    }
    return true;
  }

  /** `containsIP(ip)`. */
  containsIP(addr: IpAddr): boolean {
    return this.contains(addr);
  }

  /**
   * `containsCIDR(cidr)` as the library computes it: this prefix masked equals the other's address
   * (host bits kept, as netip.PrefixFrom keeps them) at this length, and this length is not longer.
   */
  containsCIDR(other: CidrPrefix): boolean {
    return this.masked().equals(new CidrPrefix(other.addr, this.bits)) && this.bits <= other.bits;
  }

  /** `string(cidr)`: address and length. */
  toString(): string {
    return `${this.addr.toString()}/${this.bits}`;
  }

  /** Equality as the library's CIDR type compares (address as written, and length). */
  equals(other: CidrPrefix): boolean {
    return this.bits === other.bits && this.addr.equals(other.addr);
  }
}

/** Go's netip.ParsePrefix; throws with its message. */
export function goParsePrefix(s: string): CidrPrefix {
  const fail = (msg: string) => new Error(`netip.ParsePrefix(${goQuote(s)}): ${msg}`);
  const slash = s.lastIndexOf('/');
  if (slash < 0) throw fail("no '/'");
  let addr: IpAddr;
  try {
    addr = goParseAddr(s.slice(0, slash));
  } catch (err) {
    throw fail((err as Error).message);
  }
  if (addr.is6() && addr.zone !== '') throw fail('IPv6 zones cannot be present in a prefix');
  const bitsText = s.slice(slash + 1);
  // Made only when thrown: a parse that succeeds builds no message (nor its stack).
  const badBits = () => fail(`bad bits after slash: ${goQuote(bitsText)}`);
  if (bitsText.length > 1 && (bitsText[0]! < '1' || bitsText[0]! > '9')) throw badBits();
  // strconv.Atoi: an optional sign and decimal digits that fit an int64.
  if (!/^[+-]?[0-9]+$/.test(bitsText)) throw badBits();
  const bits = BigInt(bitsText);
  if (bits > 2n ** 63n - 1n || bits < -(2n ** 63n)) throw badBits();
  const max = addr.is6() ? 128n : 32n;
  if (bits < 0n || bits > max) throw fail('prefix length out of range');
  return new CidrPrefix(addr, Number(bits));
}

const CIDR_ERROR = 'network address parse error during conversion from string';

/** The library's parseCIDR. */
function parseCidr(raw: string): CidrPrefix {
  let prefix: CidrPrefix;
  try {
    prefix = goParsePrefix(raw);
  } catch (err) {
    throw new NetError(`${CIDR_ERROR}: ${(err as Error).message}`);
  }
  if (prefix.addr.is4In6()) throw new NetError(`IPv4-mapped IPv6 address ${goQuote(raw)} is not allowed`);
  return prefix;
}

/** `cidr(s)`: the prefix, or NetError with the library's (doubled) prefix on the message. */
export function cidr(s: string): CidrPrefix {
  try {
    return parseCidr(s);
  } catch (err) {
    throw new NetError(`${CIDR_ERROR}: ${(err as Error).message}`);
  }
}

/** `isCIDR(s)`. */
export function isCIDR(s: string): boolean {
  try {
    parseCidr(s);
    return true;
  } catch {
    return false;
  }
}

/**
 * `cidr.containsIP(string)`: a string that is no address gives cel-go's "no such overload" (the
 * library passes the parse error where an IP is expected).
 */
export function cidrContainsIPString(prefix: CidrPrefix, s: string): boolean {
  let addr: IpAddr;
  try {
    addr = ip(s);
  } catch {
    throw new NetError('no such overload');
  }
  return prefix.containsIP(addr);
}

/** `cidr.containsCIDR(string)`: the parse error of the string when it is no prefix. */
export function cidrContainsCIDRString(prefix: CidrPrefix, s: string): boolean {
  return prefix.containsCIDR(cidr(s));
}

/** The Kubernetes minor version the ip and cidr functions arrive in. */
export const NET_FUNCTIONS_SINCE: Readonly<Record<string, number>> = {
  ip: 30,
  isIP: 30,
  'ip.isCanonical': 30,
  family: 30,
  isUnspecified: 30,
  isLoopback: 30,
  isLinkLocalMulticast: 30,
  isLinkLocalUnicast: 30,
  isGlobalUnicast: 30,
  cidr: 30,
  isCIDR: 30,
  containsIP: 30,
  containsCIDR: 30,
  masked: 30,
  prefixLength: 30,
};
