import type http from 'node:http';
import type { Duplex } from 'node:stream';
import { performance } from 'node:perf_hooks';
import type { Connector, HttpAnswer } from '../connector.js';
import { ExchangeError } from '../../errors.js';

/**
 * One HTTP/1.1 request over a socket we already hold (to the proxy, or a tunnel through it), sent
 * by the connector (src/domain/connector.ts): node:http does the parsing on our socket, so the
 * request goes exactly where the dialer connected and nothing dials on its own.
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

/** node's error on the request, before the answer is whole, in the proxy check's words. */
function failure(err: unknown): ExchangeError {
  const code = String((err as NodeJS.ErrnoException | null)?.code ?? '');
  if (code.startsWith('HPE_')) return new ExchangeError('protocol', 'answered with something that is not HTTP');
  return new ExchangeError('closed', 'closed the connection without an answer');
}

export async function exchange(connector: Pick<Connector, 'send'>, socket: Duplex, req: ExchangeRequest): Promise<ExchangeResponse> {
  const aborted = (): ExchangeError => new ExchangeError('aborted', 'aborted');
  const headers = { ...req.headers, ...(req.body ? { 'content-length': String(req.body.length) } : {}) };
  let answer: HttpAnswer;
  try {
    answer = await connector.send(socket, { method: req.method, path: req.path, headers, ...(req.body ? { body: req.body } : {}) }, { signal: req.signal, aborted });
  } catch (err) {
    throw err instanceof ExchangeError ? err : failure(err);
  }
  const { res, request, sentAt, at: firstByteAt } = answer;
  return new Promise((resolve, reject) => {
    let settled = false;
    const fail = (err: ExchangeError): void => {
      if (settled) return;
      settled = true;
      request.destroy();
      reject(err);
    };
    const onAbort = (): void => fail(aborted());
    if (req.signal.aborted) {
      onAbort();
      return;
    }
    req.signal.addEventListener('abort', onAbort, { once: true });
    // The socket's errors reach the request while the body comes too.
    request.on('error', (err) => {
      req.signal.removeEventListener('abort', onAbort);
      fail(req.signal.aborted ? aborted() : failure(err));
    });
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
}
