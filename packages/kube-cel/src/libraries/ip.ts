/**
 * Kubernetes' ip CEL library (from 1.30; its cidr library is cidr.ts), on Go's net/netip semantics: the same parser
 * and messages (`ParseAddr("…"): …`), the same canonical strings (RFC 5952), the same predicates,
 * and the library's own refusals (zones, IPv4-mapped IPv6 addresses) with its messages.
 */
import { goQuote } from './go.ts';

/** A call the library answers with an error; the message is the API server's. */
export class NetError extends Error {
  override name = 'NetError';
}

/** An IP address as netip.Addr holds it: 4 or 16 bytes and an IPv6 zone. */
export class IpAddr {
  constructor(
    /** 4 bytes for IPv4, 16 for IPv6. */
    readonly bytes: Uint8Array,
    readonly zone = '',
  ) {}

  /** netip's Is4. */
  is4(): boolean {
    return this.bytes.length === 4;
  }

  /** netip's Is6 (IPv4-mapped IPv6 addresses included). */
  is6(): boolean {
    return this.bytes.length === 16;
  }

  /** netip's Is4In6: ::ffff:a.b.c.d. */
  is4In6(): boolean {
    if (!this.is6()) return false;
    for (let i = 0; i < 10; i++) if (this.bytes[i] !== 0) return false;
    return this.bytes[10] === 0xff && this.bytes[11] === 0xff;
  }

  /** `family()`: 4 or 6. */
  family(): bigint {
    return this.is4() ? 4n : 6n;
  }

  /** `isUnspecified()`: 0.0.0.0 or ::. */
  isUnspecified(): boolean {
    return this.bytes.every((b) => b === 0) && this.zone === '';
  }

  /** `isLoopback()`: 127.0.0.0/8 or ::1. */
  isLoopback(): boolean {
    if (this.is4()) return this.bytes[0] === 127;
    return this.bytes.every((b, i) => b === (i === 15 ? 1 : 0));
  }

  /** netip's IsMulticast: 224.0.0.0/4 or ff00::/8. */
  isMulticast(): boolean {
    return this.is4() ? (this.bytes[0]! & 0xf0) === 0xe0 : this.bytes[0] === 0xff;
  }

  /** `isLinkLocalMulticast()`: 224.0.0.0/24 or ff02::/16 (any flags in the second byte's high nibble). */
  isLinkLocalMulticast(): boolean {
    if (this.is4()) return this.bytes[0] === 224 && this.bytes[1] === 0 && this.bytes[2] === 0;
    return this.bytes[0] === 0xff && (this.bytes[1]! & 0x0f) === 0x02;
  }

  /** `isLinkLocalUnicast()`: 169.254.0.0/16 or fe80::/10. */
  isLinkLocalUnicast(): boolean {
    if (this.is4()) return this.bytes[0] === 169 && this.bytes[1] === 254;
    return this.bytes[0] === 0xfe && (this.bytes[1]! & 0xc0) === 0x80;
  }

  /** `isGlobalUnicast()`: none of the above, nor 255.255.255.255 (private ranges count as global, as in Go). */
  isGlobalUnicast(): boolean {
    if (this.is4() && (this.isUnspecified() || this.bytes.every((b) => b === 255))) return false;
    return !this.isUnspecified() && !this.isLoopback() && !this.isMulticast() && !this.isLinkLocalUnicast();
  }

  /** `string(ip)`: netip's canonical form (dotted IPv4; RFC 5952 IPv6, lower case, longest zero run as ::). */
  toString(): string {
    if (this.is4()) return this.bytes.join('.');
    const zone = this.zone ? `%${this.zone}` : '';
    if (this.is4In6()) return `::ffff:${[...this.bytes.subarray(12)].join('.')}${zone}`;
    const groups = Array.from({ length: 8 }, (_, i) => (this.bytes[2 * i]! << 8) | this.bytes[2 * i + 1]!);
    let bestStart = -1;
    let bestLength = 1;
    for (let i = 0; i < 8; ) {
      if (groups[i] !== 0) {
        i++;
        continue;
      }
      let j = i;
      while (j < 8 && groups[j] === 0) j++;
      if (j - i > bestLength) [bestStart, bestLength] = [i, j - i];
      i = j;
    }
    const hex = (from: number, to: number) =>
      groups
        .slice(from, to)
        .map((g) => g.toString(16))
        .join(':');
    const text = bestStart < 0 ? hex(0, 8) : `${hex(0, bestStart)}::${hex(bestStart + bestLength, 8)}`;
    return text + zone;
  }

  /** Equality as the library's IP type compares (address and zone). */
  equals(other: IpAddr): boolean {
    return (
      this.bytes.length === other.bytes.length &&
      this.bytes.every((b, i) => b === other.bytes[i]) &&
      this.zone === other.zone
    );
  }
}

/** netip's parseAddrError text. */
function addrError(input: string, msg: string, at?: string): Error {
  return new Error(`ParseAddr(${goQuote(input)}): ${msg}${at ? ` (at ${goQuote(at)})` : ''}`);
}

/** netip's parseIPv4Fields over in[off:end], errors naming `in`. */
function parseIPv4Fields(input: string, off: number, end: number, fields: Uint8Array, at: number): void {
  const s = input.slice(off, end);
  let val = 0;
  let pos = 0;
  let digits = 0;
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i);
    if (c >= 0x30 && c <= 0x39) {
      if (digits === 1 && val === 0) throw addrError(input, 'IPv4 field has octet with leading zero');
      val = val * 10 + (c - 0x30);
      digits++;
      if (val > 255) throw addrError(input, 'IPv4 field has value >255');
    } else if (s[i] === '.') {
      if (i === 0 || i === s.length - 1 || s[i - 1] === '.')
        throw addrError(input, 'IPv4 field must have at least one digit', s.slice(i));
      if (pos === 3) throw addrError(input, 'IPv4 address too long');
      fields[at + pos] = val;
      pos++;
      val = 0;
      digits = 0;
    } else {
      throw addrError(input, 'unexpected character', s.slice(i));
    }
  }
  if (pos < 3) throw addrError(input, 'IPv4 address too short');
  fields[at + 3] = val;
}

function parseIPv6(input: string): IpAddr {
  let s = input;
  let zone = '';
  const percent = s.indexOf('%');
  if (percent !== -1) {
    zone = s.slice(percent + 1);
    s = s.slice(0, percent);
    if (zone === '') throw addrError(input, 'zone must be a non-empty string');
  }
  const ip = new Uint8Array(16);
  let ellipsis = -1;
  if (s.length >= 2 && s[0] === ':' && s[1] === ':') {
    ellipsis = 0;
    s = s.slice(2);
    if (s.length === 0) return new IpAddr(ip, zone);
  }
  let i = 0;
  while (i < 16) {
    let off = 0;
    let acc = 0;
    for (; off < s.length; off++) {
      const c = s[off]!;
      const digit =
        c >= '0' && c <= '9'
          ? c.charCodeAt(0) - 48
          : c >= 'a' && c <= 'f'
            ? c.charCodeAt(0) - 87
            : c >= 'A' && c <= 'F'
              ? c.charCodeAt(0) - 55
              : -1;
      if (digit < 0) break;
      acc = acc * 16 + digit;
      if (off > 3) throw addrError(input, 'each group must have 4 or less digits', s);
      if (acc > 0xffff) throw addrError(input, 'IPv6 field has value >=2^16', s);
    }
    if (off === 0) throw addrError(input, 'each colon-separated field must have at least one digit', s);
    if (off < s.length && s[off] === '.') {
      if (ellipsis < 0 && i !== 12)
        throw addrError(input, 'embedded IPv4 address must replace the final 2 fields of the address', s);
      if (i + 4 > 16)
        throw addrError(input, 'too many hex fields to fit an embedded IPv4 at the end of the address', s);
      const end = input.length - (zone ? zone.length + 1 : 0);
      parseIPv4Fields(input, end - s.length, end, ip, i);
      i += 4;
      s = '';
      break;
    }
    ip[i] = acc >> 8;
    ip[i + 1] = acc & 0xff;
    i += 2;
    s = s.slice(off);
    if (s.length === 0) break;
    if (s[0] !== ':') throw addrError(input, 'unexpected character, want colon', s);
    if (s.length === 1) throw addrError(input, 'colon must be followed by more characters', s);
    s = s.slice(1);
    if (s[0] === ':') {
      if (ellipsis >= 0) throw addrError(input, 'multiple :: in address', s);
      ellipsis = i;
      s = s.slice(1);
      if (s.length === 0) break;
    }
  }
  if (s.length !== 0) throw addrError(input, 'trailing garbage after address', s);
  if (i < 16) {
    if (ellipsis < 0) throw addrError(input, 'address string too short');
    const n = 16 - i;
    for (let j = i - 1; j >= ellipsis; j--) ip[j + n] = ip[j]!;
    ip.fill(0, ellipsis, ellipsis + n);
  } else if (ellipsis >= 0) {
    throw addrError(input, 'the :: must expand to at least one field of zeros');
  }
  return new IpAddr(ip, zone);
}

/** Go's netip.ParseAddr; throws with its message. */
export function goParseAddr(s: string): IpAddr {
  for (let i = 0; i < s.length; i++) {
    if (s[i] === '.') {
      const fields = new Uint8Array(4);
      parseIPv4Fields(s, 0, s.length, fields, 0);
      return new IpAddr(fields);
    }
    if (s[i] === ':') return parseIPv6(s);
    if (s[i] === '%') throw addrError(s, 'missing IPv6 address');
  }
  throw addrError(s, 'unable to parse IP');
}

/** The library's parseIPAddr: netip's parser, then no zones and no IPv4-mapped IPv6 addresses. */
function parseIpAddr(raw: string): IpAddr {
  let addr: IpAddr;
  try {
    addr = goParseAddr(raw);
  } catch (err) {
    throw new NetError(
      `IP Address ${goQuote(raw)} parse error during conversion from string: ${(err as Error).message}`,
    );
  }
  if (addr.zone !== '') throw new NetError(`IP address ${goQuote(raw)} with zone value is not allowed`);
  if (addr.is4In6()) throw new NetError(`IPv4-mapped IPv6 address ${goQuote(raw)} is not allowed`);
  return addr;
}

/** `ip(s)`: the address, or NetError with the library's message. */
export function ip(s: string): IpAddr {
  return parseIpAddr(s);
}

/** `isIP(s)`. */
export function isIP(s: string): boolean {
  try {
    parseIpAddr(s);
    return true;
  } catch {
    return false;
  }
}

/** `ip.isCanonical(s)`: s is an address written in its canonical form (an error when it is no address). */
export function ipIsCanonical(s: string): boolean {
  return parseIpAddr(s).toString() === s;
}
