import type { Socket } from 'node:net';
import { performance } from 'node:perf_hooks';
import { DialError, TargetForbiddenError } from '../../errors.js';
import { formatWhoisServer } from './referral.js';
import type { WhoisDialer, WhoisHopReport, WhoisServerAddress } from './types.js';
import { round2 } from '../../lib/round.js';

export interface WhoisHop extends WhoisHopReport {
  /** What the server sent (possibly partial: cut at the cap, or cut by the timeout). */
  text: string;
}

export interface AskOptions {
  timeoutMs: number;
  maxBytes: number;
  signal?: AbortSignal;
}

/**
 * UTF-8 when the bytes are UTF-8 (allowing a character cut in half at the end), else Latin-1,
 * which some ccTLD servers still send.
 */
function decode(buf: Buffer): string {
  const utf8 = new TextDecoder('utf-8', { fatal: true });
  for (let cut = 0; cut <= 3 && cut < buf.length; cut++) {
    try {
      return utf8.decode(buf.subarray(0, buf.length - cut));
    } catch {
      // try a shorter tail: the cap may have split a multi-byte character
    }
  }
  return buf.toString('latin1');
}

function errorText(err: unknown): string {
  return err instanceof Error ? err.message : String(err);
}

/**
 * Asks one WHOIS server (RFC 3912: the query, CRLF, then read until the server closes), through
 * the dialer. Never throws for the server's failures: they come back as the hop's status, with
 * whatever text arrived. Only a TargetForbiddenError (the policy's refusal) is thrown.
 */
export async function askWhoisServer<A extends string>(
  dialer: WhoisDialer<A>,
  server: WhoisServerAddress,
  query: string,
  opts: AskOptions,
): Promise<WhoisHop> {
  const started = performance.now();
  const name = formatWhoisServer(server);
  const failed = (status: 'failed' | 'timeout', error: string): WhoisHop => ({
    server: name,
    status,
    error,
    bytes: 0,
    response_time: round2(performance.now() - started),
    text: '',
  });
  const remaining = (): number => Math.max(1, Math.round(opts.timeoutMs - (performance.now() - started)));

  let addresses: readonly A[];
  try {
    ({ addresses } = await dialer.resolve(server.host, { field: 'whois_server' }));
  } catch (err) {
    if (err instanceof TargetForbiddenError) throw err;
    return failed('failed', `${name}: ${errorText(err)}`);
  }

  let socket: Socket | null = null;
  let lastError: unknown = new Error('no address');
  for (const address of addresses) {
    if (performance.now() - started >= opts.timeoutMs) break;
    try {
      socket = await dialer.connect(address, server.port, {
        timeoutMs: remaining(),
        ...(opts.signal ? { signal: opts.signal } : {}),
      });
      break;
    } catch (err) {
      lastError = err;
    }
  }
  if (socket === null) {
    const timedOut = performance.now() - started >= opts.timeoutMs || (lastError instanceof DialError && lastError.code === 'ETIMEDOUT');
    return failed(timedOut ? 'timeout' : 'failed', `${name}: ${timedOut ? `no answer within ${opts.timeoutMs} ms` : errorText(lastError)}`);
  }
  return read(socket, query, name, started, remaining(), opts);
}

function read(socket: Socket, query: string, name: string, started: number, timeoutMs: number, opts: AskOptions): Promise<WhoisHop> {
  return new Promise((resolve) => {
    const chunks: Buffer[] = [];
    let bytes = 0;
    let done = false;
    const finish = (status: WhoisHopReport['status'], error: string | null): void => {
      if (done) return;
      done = true;
      clearTimeout(timer);
      opts.signal?.removeEventListener('abort', onAbort);
      socket.destroy();
      resolve({
        server: name,
        status,
        error,
        bytes,
        response_time: round2(performance.now() - started),
        text: decode(Buffer.concat(chunks)).replace(/\r\n?/g, '\n'),
      });
    };
    const onAbort = (): void => finish('timeout', `${name}: the WHOIS lookup ran out of time`);
    const timer = setTimeout(() => finish('timeout', `${name}: no complete answer within ${opts.timeoutMs} ms`), timeoutMs);
    socket.on('data', (chunk: Buffer) => {
      const room = opts.maxBytes - bytes;
      if (chunk.length > room) {
        // At the cap: keep what fits and hang up, so a flood costs us nothing more.
        chunks.push(chunk.subarray(0, room));
        bytes += room;
        finish('truncated', `${name}: answer larger than ${opts.maxBytes} bytes, cut off`);
        return;
      }
      chunks.push(chunk);
      bytes += chunk.length;
    });
    socket.on('end', () => finish('ok', null));
    socket.on('close', () => finish('ok', null));
    socket.on('error', (err) => finish(bytes > 0 ? 'ok' : 'failed', bytes > 0 ? null : `${name}: ${err.message}`));
    if (opts.signal?.aborted) onAbort();
    else opts.signal?.addEventListener('abort', onAbort, { once: true });
    socket.write(`${query}\r\n`);
  });
}
