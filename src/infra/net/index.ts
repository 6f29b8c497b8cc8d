/** The target policy and the one dialer; see dialer.ts for the contract every probe follows. */
export {
  createDialer,
  Dialer,
  DialError,
  type CheckedAddress,
  type ConnectFn,
  type ConnectOptions,
  type DialErrorCode,
  type DialerOptions,
  type DialerStats,
  type DialResult,
  type ResolvedTarget,
  type ResolveOptions,
} from './dialer.js';
export { ConnectionLimiter } from './limiter.js';
export { TargetPolicy } from './policy.js';
export { classifyAddress, classifyIp, SPECIAL_RANGES, type AddressType, type Classification } from './ranges.js';
export { DnsHostResolver, ResolveError, type HostResolver, type ResolveErrorCode } from './resolver.js';
export { parseTarget, type ParsedTarget } from './target.js';
export { parseIpStrict } from './ip-text.js';
