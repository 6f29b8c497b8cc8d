import { performance } from 'node:perf_hooks';
import type { Timeouts } from './detect.js';
import { dialProxy, openTunnel, tlsHandshake, TIMEOUT_KINDS, type Destination, type ProxyEndpoint } from './tunnel.js';
import type { ProxyProtocol, StepReport } from './types.js';
import { round2 } from '../../lib/round.js';
import { ProxyStepError } from '../../errors.js';


/**
 * SSL support: a TLS handshake with NETDIAG_SSL_CHECK_TARGET completed through the proxy's
 * tunnel (CONNECT for HTTP proxies, the SOCKS connect for SOCKS ones). It proves the proxy
 * carries TLS; the target's certificate is deliberately not judged.
 */
export async function checkSsl(
  ep: ProxyEndpoint,
  protocol: ProxyProtocol,
  target: Destination,
  timeouts: Timeouts,
  signal: AbortSignal,
): Promise<{ supported: boolean; report: StepReport }> {
  const started = performance.now();
  const ac = new AbortController();
  const onOuter = (): void => ac.abort();
  signal.addEventListener('abort', onOuter, { once: true });
  const timer = setTimeout(() => ac.abort(), timeouts.sslMs);
  let socket: import('node:net').Socket | null = null;
  let secure: import('node:tls').TLSSocket | null = null;
  const report = (status: StepReport['status'], error: string | null): StepReport => ({ status, error, time: round2(performance.now() - started) });
  try {
    socket = await dialProxy(ep, Math.min(timeouts.connectMs, timeouts.sslMs), ac.signal);
    const tunnel = await openTunnel(socket, ep, protocol, target, ac.signal);
    secure = await tlsHandshake(ep.connector, tunnel, target.host, false, ac.signal);
    return { supported: true, report: report('ok', null) };
  } catch (err) {
    if (ac.signal.aborted) return { supported: false, report: report('timeout', `no TLS handshake through the proxy within ${timeouts.sslMs} ms`) };
    if (err instanceof ProxyStepError) return { supported: false, report: report(TIMEOUT_KINDS.has(err.kind) ? 'timeout' : 'failed', err.message) };
    throw err;
  } finally {
    clearTimeout(timer);
    signal.removeEventListener('abort', onOuter);
    secure?.destroy();
    socket?.destroy();
  }
}
