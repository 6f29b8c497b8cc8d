import { getSystemErrorName } from 'node:util';
import { round2 } from '../../lib/round.js';

/**
 * A bare TCP connect for the port scanner, on Node's own TCP handle (the `tcp_wrap` binding that
 * `net.Socket` is built on) without the socket around it.
 *
 * Why not `net.connect`: a connect scan only asks "did the handshake complete?". `net.Socket`
 * builds a duplex stream per port, and Node makes an Error with a captured stack trace for every
 * refused one; for 1000 loopback ports that was two thirds of the scan's CPU and left it slower
 * than nmap. nmap does the same thing with its own raw sockets. The handle is the same one
 * `net.Socket` uses, so connect semantics (non-blocking connect, errno codes) are unchanged.
 *
 * `process.binding` is a legacy API (DEP0111, documentation-only). When a runtime does not offer
 * `tcp_wrap`, `rawConnect` is null and the dialer falls back to `net.connect`.
 */

export interface RawConnectResult {
  /** null when the handshake completed; otherwise the system's code (`ECONNREFUSED`, ...), `ETIMEDOUT` on our timeout. */
  code: string | null;
  /** From the connect call to its answer (or the timeout), ms with two decimals. */
  elapsedMs: number;
  /** The local port the kernel chose; equal to the probed one on a self-connect. */
  localPort: number | null;
  localAddress: string | null;
}

export type RawConnect = (host: string, family: 4 | 6, port: number, timeoutMs: number, signal?: AbortSignal) => Promise<RawConnectResult>;

interface TcpHandle {
  connect(req: ConnectReq, address: string, port: number): number;
  connect6(req: ConnectReq, address: string, port: number): number;
  getsockname(out: { address?: string; port?: number }): number;
  reset?(callback: () => void): number;
  close(callback?: () => void): void;
}
interface ConnectReq {
  oncomplete: (status: number) => void;
  address: string;
  port: number;
}
interface TcpWrapBinding {
  TCP: new (type: number) => TcpHandle;
  TCPConnectWrap: new () => ConnectReq;
  constants: { SOCKET: number };
}

function loadBinding(): TcpWrapBinding | null {
  try {
    const binding = (process as unknown as { binding(name: string): unknown }).binding('tcp_wrap') as Partial<TcpWrapBinding>;
    if (typeof binding.TCP !== 'function' || typeof binding.TCPConnectWrap !== 'function' || typeof binding.constants?.SOCKET !== 'number') return null;
    return binding as TcpWrapBinding;
  } catch {
    return null;
  }
}


function codeOf(status: number): string {
  try {
    return getSystemErrorName(status);
  } catch {
    return 'EDIAL';
  }
}

function makeRawConnect(binding: TcpWrapBinding): RawConnect {
  const { TCP, TCPConnectWrap, constants } = binding;
  return (host, family, port, timeoutMs, signal) =>
    new Promise<RawConnectResult>((resolve, reject) => {
      const handle = new TCP(constants.SOCKET);
      const started = performance.now();
      let settled = false;
      const finish = (code: string | null, localPort: number | null = null, localAddress: string | null = null): void => {
        settled = true;
        clearTimeout(timer);
        signal?.removeEventListener('abort', onAbort);
        // An established connection is reset rather than closed: no TIME_WAIT per open port,
        // and the far end drops it at once instead of waiting for us to talk.
        const reset = code === null && typeof handle.reset === 'function' && handle.reset(() => undefined) === 0;
        if (!reset) handle.close();
        resolve({ code, elapsedMs: round2(performance.now() - started), localPort, localAddress });
      };
      const onAbort = (): void => {
        if (settled) return;
        settled = true;
        clearTimeout(timer);
        handle.close();
        reject(signal?.reason);
      };
      const req = new TCPConnectWrap();
      req.address = host;
      req.port = port;
      req.oncomplete = (status: number) => {
        // Closing a handle mid-connect completes the request with ECANCELED; it is already answered.
        if (settled) return;
        if (status !== 0) return finish(codeOf(status));
        const local: { address?: string; port?: number } = {};
        handle.getsockname(local);
        finish(null, local.port ?? null, local.address ?? null);
      };
      const timer = setTimeout(() => {
        if (!settled) finish('ETIMEDOUT');
      }, timeoutMs);
      if (signal?.aborted) return onAbort();
      signal?.addEventListener('abort', onAbort, { once: true });
      const err = family === 4 ? handle.connect(req, host, port) : handle.connect6(req, host, port);
      if (err !== 0) finish(codeOf(err));
    });
}

const binding = loadBinding();

/** The raw connect, or null where this Node has no `tcp_wrap` binding to offer. */
export const rawConnect: RawConnect | null = binding ? makeRawConnect(binding) : null;
