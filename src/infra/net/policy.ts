import ipaddr from 'ipaddr.js';
import { TargetForbiddenError } from '../../errors.js';
import { blockEnds, classifyAddress, classifyBlock, type Classification } from '../../net/ranges.js';

type Addr = ipaddr.IPv4 | ipaddr.IPv6;

/**
 * Who may be probed: public addresses, plus the ranges the operator opted back in with
 * NETDIAG_ALLOW_TARGETS. Only the dialer should need this; it checks every resolved address.
 */
export class TargetPolicy {
  readonly #allowed: ReadonlyArray<[Addr, number]>;

  /** @param allowTargets CIDRs (Config.allowTargets); a bare address means a single host. */
  constructor(allowTargets: readonly string[] = []) {
    this.#allowed = allowTargets.map((cidr) => {
      try {
        if (cidr.includes('/')) return ipaddr.parseCIDR(cidr);
        const addr = ipaddr.parse(cidr);
        return [addr, addr.kind() === 'ipv4' ? 32 : 128] as [Addr, number];
      } catch {
        throw new TypeError(`TargetPolicy: "${cidr}" is not a CIDR such as 10.0.0.0/8 or ::1/128`);
      }
    });
  }

  #inAllowList(addr: Addr): boolean {
    return this.#allowed.some(([net, bits]) => net.kind() === addr.kind() && addr.match(net, bits));
  }

  /** True when the operator opted this address (or the IPv4 it carries) back in. */
  #isAllowListed(addr: Addr, classification: Classification): boolean {
    if (this.#inAllowList(addr)) return true;
    // An IPv4-mapped or tunnelled address is the embedded IPv4 as far as opting in goes.
    if (classification.ip !== '' && ipaddr.IPv4.isValidFourPartDecimal(classification.ip)) {
      return this.#inAllowList(ipaddr.IPv4.parse(classification.ip));
    }
    return false;
  }

  /**
   * Whether the records of an address block's reverse zone may be asked for (a PTR, or any
   * type, of a name under `in-addr.arpa`/`ip6.arpa`, src/domain/dns): they map the operator's own
   * network when the block is blocked, so they follow this policy as a probe target does. A whole
   * address (`bits` 32 or 128) is judged as `check` judges it. A shorter block is refused when it
   * lies wholly in one blocked range (its first and last addresses fall in the same one:
   * `168.192.in-addr.arpa`, `d.f.ip6.arpa`) unless one allowed range holds it all; a block that
   * spans public space (`172.in-addr.arpa`, `in-addr.arpa`) is the public registry's, and answered.
   * Throws TargetForbiddenError naming `name`, and `askedAs` when the name asked led there (a CNAME).
   */
  checkReverse(name: string, network: Addr, bits: number, askedAs?: string): void {
    const c = classifyBlock(network, bits);
    if (c.type === 'public') return;
    const [first, last] = blockEnds(network, bits);
    if (this.#oneAllowedRangeHolds(first, last, classifyAddress(first), classifyAddress(last))) return;
    const full = network.kind() === 'ipv4' ? 32 : 128;
    const shown = bits >= full ? displayed(first, c) : `${displayed(first, c)}/${bits}`;
    const what = askedAs === undefined ? `${name} is` : `${askedAs} leads (CNAME) to ${name},`;
    throw new TargetForbiddenError(
      askedAs ?? name,
      shown,
      c.range,
      c.type,
      `${what} the reverse name of ${shown}, which is in the blocked ${c.type} range ${c.range}: its records belong to a private network (NETDIAG_ALLOW_TARGETS opts a range back in)`,
    );
  }

  /** Both ends of a block in one allowed range (directly, or through the IPv4 they carry): then so is all between. */
  #oneAllowedRangeHolds(first: Addr, last: Addr, cf: Classification, cl: Classification): boolean {
    const within = (a: Addr, b: Addr) => this.#allowed.some(([net, bits]) => net.kind() === a.kind() && a.match(net, bits) && b.match(net, bits));
    if (within(first, last)) return true;
    const v4 = (c: Classification) => (ipaddr.IPv4.isValidFourPartDecimal(c.ip) ? ipaddr.IPv4.parse(c.ip) : null);
    const [a, b] = [v4(cf), v4(cl)];
    return a !== null && b !== null && within(a, b);
  }

  /**
   * Throws TargetForbiddenError naming `target`, the offending address and its range.
   * Returns the classification otherwise.
   */
  check(target: string, addr: Addr): Classification {
    const c = classifyAddress(addr);
    if (c.type === 'public' || this.#isAllowListed(addr, c)) return c;
    throw new TargetForbiddenError(target, displayed(addr, c), c.range, c.type);
  }
}

/** An address as an error shows it: without its zone, and with the IPv4 that decided when it carries one. */
function displayed(addr: Addr, c: Classification): string {
  const shown = addr.kind() === 'ipv6' ? new ipaddr.IPv6((addr as ipaddr.IPv6).parts).toString() : addr.toString();
  return shown === c.ip ? shown : `${shown} (${c.ip})`;
}
