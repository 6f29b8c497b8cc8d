/** The target policy and the one dialer; see dialer.ts for the contract every probe follows. */
export { createDialer, Dialer, type ConnectFn, type DialerOptions, type DialerStats } from './dialer.js';

export { TargetPolicy } from './policy.js';

export { DnsHostResolver, type HostResolver } from './resolver.js';

