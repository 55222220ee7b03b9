/**
 * What kind of host or address a URL names: non-public address classes (private, loopback, link-local, NAT64, …) and
 * loopback hosts. Pure, so every layer that decides on a URL — the SSRF guard (transport/url-guard.ts), the
 * plain-http rule of the configuration, the bin's flags and the corpus fetch — uses the one rule.
 */
import { isIP } from 'node:net';

const V4_BLOCKS: [base: number, bits: number, what: string][] = [
  [0x00000000, 8, 'an unspecified address (0.0.0.0/8)'],
  [0x0a000000, 8, 'a private address (RFC 1918, 10.0.0.0/8)'],
  [0x64400000, 10, 'a carrier-grade NAT address (RFC 6598, 100.64.0.0/10)'],
  [0x7f000000, 8, 'a loopback address (127.0.0.0/8)'],
  [0xa9fe0000, 16, 'a link-local address (169.254.0.0/16, cloud metadata endpoints included)'],
  [0xac100000, 12, 'a private address (RFC 1918, 172.16.0.0/12)'],
  [0xc0000000, 24, 'an IETF protocol assignment (192.0.0.0/24)'],
  [0xc0a80000, 16, 'a private address (RFC 1918, 192.168.0.0/16)'],
  [0xc6120000, 15, 'a benchmarking address (198.18.0.0/15)'],
  [0xe0000000, 4, 'a multicast address (224.0.0.0/4)'],
  [0xf0000000, 4, 'a reserved or broadcast address (240.0.0.0/4)'],
];

function parseV4(text: string): number | undefined {
  if (isIP(text) !== 4) return undefined;
  return text.split('.').reduce((n, octet) => n * 256 + Number(octet), 0);
}

const v4Text = (n: number) => [n >>> 24, (n >>> 16) & 255, (n >>> 8) & 255, n & 255].join('.');

function v4Class(n: number): string | undefined {
  for (const [base, bits, what] of V4_BLOCKS) if ((n ^ base) >>> (32 - bits) === 0) return what;
  return undefined;
}

/** Eight 16-bit groups, or undefined when the text is not an IPv6 address. */
function parseV6(text: string): number[] | undefined {
  let s = text
    .replace(/^\[|\]$/g, '')
    .split('%')[0]!
    .toLowerCase();
  if (isIP(s) !== 6) return undefined;
  const dotted = /(\d{1,3}(?:\.\d{1,3}){3})$/.exec(s);
  if (dotted) {
    const n = parseV4(dotted[1]!);
    if (n === undefined) return undefined;
    s = `${s.slice(0, -dotted[1]!.length)}${(n >>> 16).toString(16)}:${(n & 0xffff).toString(16)}`;
  }
  const [head, tail] = s.split('::') as [string, string | undefined];
  const left = head ? head.split(':') : [];
  const right = tail === undefined ? undefined : tail ? tail.split(':') : [];
  const groups =
    right === undefined ? left : [...left, ...Array<string>(8 - left.length - right.length).fill('0'), ...right];
  return groups.length === 8 ? groups.map((g) => parseInt(g, 16)) : undefined;
}

/** The IPv4 address in groups `hi` and `lo` of an IPv6 address, as a number. */
const embeddedV4 = (g: number[], hi: number, lo: number) => ((g[hi]! << 16) >>> 0) + g[lo]!;

function v6Class(g: number[]): string | undefined {
  if (g[0] === 0) return zeroPrefixV6Class(g);
  if (g[0] === 0x64 && g[1] === 0xff9b) return nat64Class(g);
  if (g[0] === 0x2002) {
    const inner = v4Class(embeddedV4(g, 1, 2));
    return inner ? `a 6to4 address of ${v4Text(embeddedV4(g, 1, 2))}, ${inner}` : undefined;
  }
  if ((g[0]! & 0xfe00) === 0xfc00) return 'an IPv6 unique local address (fc00::/7)';
  if ((g[0]! & 0xffc0) === 0xfe80) return 'an IPv6 link-local address (fe80::/10)';
  if ((g[0]! & 0xffc0) === 0xfec0) return 'an IPv6 site-local address (fec0::/10, deprecated)';
  if ((g[0]! & 0xff00) === 0xff00) return 'an IPv6 multicast address (ff00::/8)';
  return undefined;
}

/** An IPv6 address whose first group is 0: unspecified, loopback, or an IPv4 address mapped, compatible or translated. */
function zeroPrefixV6Class(g: number[]): string | undefined {
  const zero = (from: number, to: number) => g.slice(from, to).every((x) => x === 0);
  if (zero(0, 8)) return 'the unspecified IPv6 address (::)';
  if (zero(0, 7) && g[7] === 1) return 'the IPv6 loopback address (::1)';
  if (zero(0, 5) && g[5] === 0xffff) {
    const inner = v4Class(embeddedV4(g, 6, 7));
    return inner ? `an IPv4-mapped IPv6 address of ${v4Text(embeddedV4(g, 6, 7))}, ${inner}` : undefined;
  }
  if (zero(0, 6)) return `an IPv4-compatible IPv6 address (deprecated, ::${v4Text(embeddedV4(g, 6, 7))})`;
  if (zero(0, 4) && g[4] === 0xffff && g[5] === 0)
    return `an IPv4-translated IPv6 address (::ffff:0:${v4Text(embeddedV4(g, 6, 7))})`;
  return undefined;
}

/** A NAT64 address (64:ff9b::/96, RFC 6052) of a non-public IPv4 address, or the local-use prefix (64:ff9b:1::/48). */
function nat64Class(g: number[]): string | undefined {
  if (g[2] === 1) return 'a local-use NAT64 address (64:ff9b:1::/48)';
  const inner = g.slice(2, 6).every((x) => x === 0) ? v4Class(embeddedV4(g, 6, 7)) : undefined;
  return inner ? `a NAT64 address of ${v4Text(embeddedV4(g, 6, 7))}, ${inner}` : undefined;
}

/**
 * What kind of non-public address this is ("a loopback address (127.0.0.0/8)"),
 * or undefined for a public unicast address (or text that is not an address).
 */
export function nonPublicAddress(address: string): string | undefined {
  const v4 = parseV4(address);
  if (v4 !== undefined) return v4Class(v4);
  const v6 = parseV6(address);
  return v6 ? v6Class(v6) : undefined;
}

/** `localhost`, `*.localhost` (RFC 6761: always loopback), 127.x.y.z, ::1. */
export function isLoopbackHost(hostname: string): boolean {
  const host = bare(hostname);
  if (host === 'localhost' || host.endsWith('.localhost')) return true;
  const v4 = parseV4(host);
  if (v4 !== undefined) return v4 >>> 24 === 127;
  const v6 = parseV6(host);
  return v6 !== undefined && v6.slice(0, 7).every((x) => x === 0) && v6[7] === 1;
}

/** Hostname without IPv6 brackets or a trailing dot, lower case. */
export function bare(hostname: string): string {
  return hostname
    .replace(/^\[|\]$/g, '')
    .replace(/\.$/, '')
    .toLowerCase();
}
