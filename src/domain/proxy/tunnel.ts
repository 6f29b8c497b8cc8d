import http from 'node:http';
import type net from 'node:net';
import type { Duplex } from 'node:stream';
import type tls from 'node:tls';
import { SocksClient } from 'socks';
import type { Connector } from '../connector.js';
import type { CheckedAddress } from '../dialer.js';
import type { SocketBudget } from '../socket-budget.js';
import { CHECK_USER_AGENT, SOCKS_PACKAGE_TIMEOUT_MS } from './defaults.js';
import { hostPortText } from './parse.js';
import type { ProxyProtocol, ProxySpec } from './types.js';
import { DialError, type ProxyFailKind, ProxyStepError } from '../../errors.js';

/**
 * Ways through a proxy: a TCP connection to it (always from the one dialer, by the connector of
 * src/domain/connector.ts), then for HTTPS a CONNECT tunnel (node:http parses the answer) and
 * for SOCKS4/4a/5 a tunnel negotiated by the `socks` package on that same socket
 * (`existing_socket`, so the package never dials itself). undici's ProxyAgent is not used: it
 * opens its own sockets to the proxy, past the dialer.
 */

/** Higher tells more: when every protocol fails, the most telling failure is reported. */
export const FAIL_RANK: Record<ProxyFailKind, number> = {
  auth: 7,
  relay: 6,
  relay_timeout: 5,
  protocol: 4,
  timeout: 3,
  connect_timeout: 2,
  connect: 1,
};

export const TIMEOUT_KINDS: ReadonlySet<ProxyFailKind> = new Set(['relay_timeout', 'timeout', 'connect_timeout']);

export interface ProxyEndpoint {
  connector: Connector;
  address: CheckedAddress;
  spec: ProxySpec;
  budget?: SocketBudget;
}

export interface Destination {
  /** Hostname or address, IPv6 without brackets. */
  host: string;
  port: number;
}

/** TCP to the proxy through the dialer; a DialError becomes a ProxyStepError. */
export async function dialProxy(ep: ProxyEndpoint, timeoutMs: number, signal: AbortSignal): Promise<net.Socket> {
  try {
    const { socket } = await ep.connector.connect([ep.address], ep.spec.port, { timeoutMs, signal, ...(ep.budget ? { budget: ep.budget } : {}) });
    return socket;
  } catch (err) {
    if (err instanceof DialError) {
      if (err.code === 'ETIMEDOUT') throw new ProxyStepError('connect_timeout', `no TCP connection to the proxy within ${timeoutMs} ms`);
      if (err.code === 'ABORT_ERR') throw new ProxyStepError('connect_timeout', 'gave up waiting for a connection to the proxy');
      throw new ProxyStepError('connect', `${err.reason} by the proxy's host`);
    }
    throw err;
  }
}

export function proxyAuthorization(spec: ProxySpec): Record<string, string> {
  if (spec.username === null) return {};
  const token = Buffer.from(`${spec.username}:${spec.password ?? ''}`, 'utf8').toString('base64');
  return { 'proxy-authorization': `Basic ${token}` };
}

function statusText(code: number): string {
  return `HTTP ${code}${http.STATUS_CODES[code] ? ` ${http.STATUS_CODES[code]}` : ''}`;
}

/** What a proxy's non-2xx answer means, for CONNECT and for absolute-form requests alike. */
export function httpRefusal(spec: ProxySpec, status: number, what: string): ProxyStepError {
  if (status === 407) {
    return new ProxyStepError('auth', spec.username === null ? `the proxy requires credentials (${statusText(status)})` : `the proxy refused our credentials (${statusText(status)})`);
  }
  return new ProxyStepError('relay', `the proxy did not ${what} (${statusText(status)})`);
}

/** HTTP CONNECT on an open socket to the proxy; resolves the tunnel. */
async function connectTunnel(connector: Pick<Connector, 'send'>, socket: net.Socket, spec: ProxySpec, dest: Destination, signal: AbortSignal): Promise<Duplex> {
  const authority = hostPortText(dest.host, dest.port);
  let answer;
  try {
    answer = await connector.send(
      socket,
      { method: 'CONNECT', path: authority, headers: { host: authority, 'user-agent': CHECK_USER_AGENT, ...proxyAuthorization(spec) } },
      { signal, aborted: () => new ProxyStepError('timeout', 'aborted') },
    );
  } catch (err) {
    if (err instanceof ProxyStepError) throw err;
    throw String((err as NodeJS.ErrnoException | null)?.code ?? '').startsWith('HPE_')
      ? new ProxyStepError('protocol', 'answered CONNECT with something that is not HTTP')
      : new ProxyStepError('protocol', 'closed the connection instead of answering CONNECT');
  }
  const { res } = answer;
  // A CONNECT's answer always carries the socket past its head.
  const tunnel = answer.tunnel!;
  if (res.statusCode !== 200) {
    tunnel.socket.destroy();
    throw httpRefusal(spec, res.statusCode ?? 0, `open a tunnel to ${authority}`);
  }
  if (tunnel.head.length > 0) tunnel.socket.unshift(tunnel.head);
  return tunnel.socket;
}

function socksFailure(spec: ProxySpec, message: string): ProxyStepError {
  if (/Authentication failed/i.test(message)) return new ProxyStepError('auth', 'the SOCKS5 proxy refused our credentials');
  if (/no accepted authentication type/i.test(message)) {
    return new ProxyStepError('auth', spec.username === null ? 'the SOCKS5 proxy requires credentials' : 'the SOCKS5 proxy accepts none of our authentication methods');
  }
  if (/rejected connection/i.test(message)) {
    const why = /-\s*(\w+)/.exec(message)?.[1];
    return new ProxyStepError('relay', `the SOCKS proxy refused to connect to the destination${why ? ` (${why})` : ''}`);
  }
  if (/Socket closed/i.test(message)) return new ProxyStepError('protocol', 'closed the connection during the SOCKS handshake');
  return new ProxyStepError('protocol', 'answered with something that is not SOCKS');
}

/** SOCKS4/4a/5 CONNECT on an open socket to the proxy, negotiated by the `socks` package. */
async function socksTunnel(socket: net.Socket, ep: ProxyEndpoint, version: 4 | 5, dest: Destination, signal: AbortSignal): Promise<Duplex> {
  const { spec } = ep;
  const onAbort = (): void => {
    socket.destroy();
  };
  signal.addEventListener('abort', onAbort, { once: true });
  try {
    const { socket: tunnel } = await SocksClient.createConnection({
      command: 'connect',
      existing_socket: socket,
      proxy: {
        host: ep.address,
        port: spec.port,
        type: version,
        ...(spec.username !== null ? (version === 5 ? { userId: spec.username, password: spec.password ?? '' } : { userId: spec.username }) : {}),
      },
      destination: { host: dest.host, port: dest.port },
      timeout: SOCKS_PACKAGE_TIMEOUT_MS,
    });
    return tunnel;
  } catch (err) {
    if (signal.aborted) throw new ProxyStepError('timeout', 'aborted');
    throw socksFailure(spec, err instanceof Error ? err.message : String(err));
  } finally {
    signal.removeEventListener('abort', onAbort);
  }
}

/** A tunnel to `dest` through the proxy with the given protocol (http proxies tunnel by CONNECT). */
export function openTunnel(socket: net.Socket, ep: ProxyEndpoint, protocol: ProxyProtocol, dest: Destination, signal: AbortSignal): Promise<Duplex> {
  switch (protocol) {
    case 'http':
    case 'https':
      return connectTunnel(ep.connector, socket, ep.spec, dest, signal);
    case 'socks4':
      return socksTunnel(socket, ep, 4, dest, signal);
    case 'socks5':
      return socksTunnel(socket, ep, 5, dest, signal);
  }
}

/**
 * A TLS handshake over a tunnel. `verify` false: only the handshake matters, not the certificate.
 * The connector's one shared TLS context serves every such handshake (building one per
 * connection loads the CA store each time, the largest cost of a bulk check).
 */
export async function tlsHandshake(connector: Pick<Connector, 'startTls'>, tunnel: Duplex, host: string, verify: boolean, signal: AbortSignal): Promise<tls.TLSSocket> {
  const servername = /^[\d.]+$/.test(host) || host.includes(':') ? undefined : host;
  try {
    const { socket } = await connector.startTls(tunnel, {
      servername,
      verify,
      alpn: ['http/1.1'],
      signal,
      aborted: () => new ProxyStepError('relay_timeout', 'aborted'),
    });
    return socket;
  } catch (err) {
    if (err instanceof ProxyStepError) throw err;
    throw new ProxyStepError('relay', `TLS handshake through the proxy failed (${err instanceof Error ? err.message : String(err)})`);
  }
}
