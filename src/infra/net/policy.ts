import ipaddr from 'ipaddr.js';
import { TargetForbiddenError } from '../../errors.js';
import { classifyAddress, type Classification } from '../../net/ranges.js';

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
   * Throws TargetForbiddenError naming `target`, the offending address and its range.
   * Returns the classification otherwise.
   */
  check(target: string, addr: Addr): Classification {
    const c = classifyAddress(addr);
    if (c.type === 'public' || this.#isAllowListed(addr, c)) return c;
    const shown = addr.kind() === 'ipv6' ? new ipaddr.IPv6((addr as ipaddr.IPv6).parts).toString() : addr.toString();
    const address = shown === c.ip ? shown : `${shown} (${c.ip})`;
    throw new TargetForbiddenError(target, address, c.range, c.type);
  }
}
