import { BootstrapRegistry, RdapService, type BootstrapKind, type RdapServiceOptions } from '../../domain/rdap/index.js';
import type { Dialer } from '../net/dialer.js';
import { DialerRdapHttp, type DialerRdapHttpOptions } from './fetch.js';
import { bootstrapSource } from './source.js';
import { WorkerRdapDecoder } from './worker-decoder.js';

export { DialerRdapHttp } from './fetch.js';
export { bootstrapSource, DirectoryBootstrapSource, UrlBootstrapSource } from './source.js';
export { WorkerRdapDecoder } from './worker-decoder.js';

/**
 * RDAP over the one dialer, the bootstrap files from NETDIAG_RDAP_BOOTSTRAP (a base URL or a
 * directory), the shipped snapshot when they cannot be had.
 */
/** What tests may change: shorter timeouts, a smaller cap, a CA for https fixtures. */
export type RdapTuning = DialerRdapHttpOptions & Omit<RdapServiceOptions, 'http' | 'bootstrap'>;

export function createRdap(
  config: { rdapBootstrap: string },
  dialer: Dialer,
  opts: RdapTuning & { onBootstrapError?: (kind: BootstrapKind, err: unknown) => void } = {},
): RdapService {
  const { ca, onBootstrapError, ...tuning } = opts;
  const http = new DialerRdapHttp(dialer, ca !== undefined ? { ca } : {});
  const bootstrap = new BootstrapRegistry({ source: bootstrapSource(config.rdapBootstrap, http), ...(onBootstrapError ? { onFetchError: onBootstrapError } : {}) });
  // Answers are parsed off the event loop; the thread is unref'd while idle, so it never holds the process open.
  return new RdapService({ ...tuning, http, bootstrap, decoder: new WorkerRdapDecoder() });
}
