import http from 'node:http';
import type { Duplex } from 'node:stream';
import { performance } from 'node:perf_hooks';
import { ExchangeError } from '../../errors.js';

/**
 * One HTTP/1.1 request over a socket we already hold (to the proxy, or a tunnel through it).
 * node:http does the parsing: `createConnection` hands it our socket, so the request goes
 * exactly where the dialer connected and nothing dials on its own.
 */

export interface ExchangeRequest {
  method: 'GET' | 'POST';
  /** Absolute-form (`http://judge/...`) for an HTTP proxy, origin-form through a tunnel. */
  path: string;
  headers: Record<string, string>;
  body?: Buffer;
  signal: AbortSignal;
  /** Bytes of body kept; the rest is read and counted but dropped. */
  keepBytes: number;
}

export interface ExchangeResponse {
  status: number;
  headers: http.IncomingHttpHeaders;
  body: Buffer;
  /** Body bytes received (kept or not). */
  bytes: number;
  /** performance.now() marks. */
  sentAt: number;
  firstByteAt: number;
  endAt: number;
}

export function exchange(socket: Duplex, req: ExchangeRequest): Promise<ExchangeResponse> {
  return new Promise((resolve, reject) => {
    let settled = false;
    const fail = (err: ExchangeError): void => {
      if (settled) return;
      settled = true;
      clientRequest.destroy();
      reject(err);
    };
    const headers = { ...req.headers, ...(req.body ? { 'content-length': String(req.body.length) } : {}) };
    const clientRequest = http.request({
      method: req.method,
      path: req.path,
      headers,
      setHost: false,
      createConnection: () => socket as unknown as import('node:net').Socket,
    });
    const onAbort = (): void => fail(new ExchangeError('aborted', 'aborted'));
    if (req.signal.aborted) {
      onAbort();
      return;
    }
    req.signal.addEventListener('abort', onAbort, { once: true });
    const sentAt = performance.now();
    clientRequest.on('error', (err: NodeJS.ErrnoException) => {
      req.signal.removeEventListener('abort', onAbort);
      if (req.signal.aborted) return fail(new ExchangeError('aborted', 'aborted'));
      const code = err.code ?? '';
      if (code.startsWith('HPE_')) return fail(new ExchangeError('protocol', 'answered with something that is not HTTP'));
      fail(new ExchangeError('closed', 'closed the connection without an answer'));
    });
    clientRequest.on('response', (res) => {
      const firstByteAt = performance.now();
      const chunks: Buffer[] = [];
      let kept = 0;
      let bytes = 0;
      res.on('data', (chunk: Buffer) => {
        bytes += chunk.length;
        if (kept < req.keepBytes) {
          const part = chunk.subarray(0, req.keepBytes - kept);
          chunks.push(part);
          kept += part.length;
        }
      });
      res.on('end', () => {
        req.signal.removeEventListener('abort', onAbort);
        if (settled) return;
        settled = true;
        resolve({
          status: res.statusCode ?? 0,
          headers: res.headers,
          body: Buffer.concat(chunks),
          bytes,
          sentAt,
          firstByteAt,
          endAt: performance.now(),
        });
      });
      res.on('error', () => fail(new ExchangeError('closed', 'closed the connection in the middle of the answer')));
      res.on('aborted', () => fail(new ExchangeError('closed', 'closed the connection in the middle of the answer')));
    });
    clientRequest.end(req.body);
  });
}
