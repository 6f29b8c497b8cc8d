import { performance } from 'node:perf_hooks';
import type { Duplex } from 'node:stream';
import { MAX_UPLOAD_ANSWER_BYTES, SPEED_MIN_TIMED_MS, TOO_FAST_TO_MEASURE } from './defaults.js';
import { judgeChannel, judgeHeaders, type JudgeLink, type Timeouts } from './detect.js';
import { exchange, type ExchangeResponse } from './exchange.js';
import { parseUploadReceipt, type JudgeTarget } from './judge-client.js';
import { dialProxy, TIMEOUT_KINDS, type ProxyEndpoint } from './tunnel.js';
import type { ProxyProtocol, ProxySpeed, StepReport } from './types.js';
import { round2 } from '../../lib/round.js';
import { ExchangeError, ProxyStepError } from '../../errors.js';


/**
 * Mbps of `bytes` moved in `ms`, or TOO_FAST_TO_MEASURE when `ms` is under SPEED_MIN_TIMED_MS:
 * a shorter interval (zero or less on loopback) cannot be timed honestly, and a clamped one
 * would only give a constant that looks like a measurement.
 */
export function mbps(bytes: number, ms: number): string {
  if (!(ms >= SPEED_MIN_TIMED_MS)) return TOO_FAST_TO_MEASURE;
  return `${round2((bytes * 8) / (ms / 1000) / 1e6)} Mbps`;
}

/**
 * Speed through the proxy, both halves on one connection (and tunnel) when it stays open: the judge's fixed download
 * payload (latency = time to its first byte, download = the rest of it), then a fixed upload
 * the judge counts. Whatever finished before the timeout is reported; the rest is null. A half
 * that took under SPEED_MIN_TIMED_MS is TOO_FAST_TO_MEASURE instead of a figure.
 */
export async function measureSpeed(
  ep: ProxyEndpoint,
  protocol: ProxyProtocol,
  judge: JudgeTarget,
  nonce: string,
  /** The judge's key: its receipt for the upload must be signed with it. */
  key: Buffer,
  upload: Buffer,
  expectedDownload: number,
  timeouts: Timeouts,
  signal: AbortSignal,
  /** The protocol try's open way to the judge, when it kept one: the download goes over it. */
  link: JudgeLink | null = null,
): Promise<{ speed: ProxySpeed; report: StepReport }> {
  const started = performance.now();
  const ac = new AbortController();
  const onOuter = (): void => ac.abort();
  signal.addEventListener('abort', onOuter, { once: true });
  const timer = setTimeout(() => ac.abort(), timeouts.speedMs);
  const speed: ProxySpeed = { download: null, upload: null, latency: null };
  const sockets: Array<import('node:net').Socket> = [];
  let open: Pick<JudgeLink, 'channel' | 'path' | 'extraHeaders'> | null = link;
  if (link) sockets.push(link.socket);

  // The upload goes over the download's connection when it is still open (one connection and
  // one tunnel per test, not two); a proxy or judge that closed it gets a new one.
  const usable = (c: Duplex): boolean => !c.destroyed && c.writable && !c.readableEnded;
  const through = async (method: 'GET' | 'POST', suffix: string, body?: Buffer): Promise<ExchangeResponse> => {
    const reused = open !== null && usable(open.channel);
    if (!reused || open === null) {
      const socket = await dialProxy(ep, timeouts.connectMs, ac.signal);
      sockets.push(socket);
      open = await judgeChannel(socket, ep, protocol, judge, ac.signal);
    }
    const { channel, path, extraHeaders } = open;
    const sent = exchange(ep.connector, channel, {
      method,
      path: path(nonce, suffix),
      // Without an agent node:http asks for Connection: close unless told otherwise: the download asks to keep it.
      headers: { ...judgeHeaders(judge), ...extraHeaders, ...(body ? { 'content-type': 'application/octet-stream' } : { connection: 'keep-alive' }) },
      ...(body ? { body } : {}),
      signal: ac.signal,
      keepBytes: body ? MAX_UPLOAD_ANSWER_BYTES : 0,
    });
    if (!reused) return sent;
    // A kept connection the other side closed just as we reused it gets one fresh try.
    return sent.catch((err: unknown) => {
      if (!(err instanceof ExchangeError && err.kind === 'closed')) throw err;
      channel.destroy();
      return through(method, suffix, body);
    });
  };
  const report = (status: StepReport['status'], error: string | null): StepReport => ({ status, error, time: round2(performance.now() - started) });

  try {
    const down = await through('GET', '/download');
    if (down.status !== 200 || down.bytes !== expectedDownload) {
      return { speed, report: report('failed', `the download arrived incomplete (HTTP ${down.status}, ${down.bytes} of ${expectedDownload} bytes)`) };
    }
    const latency = down.firstByteAt - down.sentAt;
    speed.latency = `${round2(latency)}ms`;
    speed.download = mbps(down.bytes, down.endAt - down.firstByteAt);
    const up = await through('POST', '/upload', upload);
    // Only the judge's signed receipt counts: a proxy that drops the upload cannot claim it arrived.
    const counted = up.status === 200 ? parseUploadReceipt(up.body, nonce, key) : null;
    if (counted === null && up.status === 200) {
      return { speed, report: report('failed', 'the answer to the upload is not the judge\'s signed receipt: the proxy answered it itself') };
    }
    if (counted !== upload.length) {
      return { speed, report: report('failed', `the upload did not arrive whole (HTTP ${up.status})`) };
    }
    // The bytes the judge counted, over the time they took: it answers once the last byte is in,
    // and one round trip of that is latency, not transfer.
    speed.upload = mbps(counted, up.endAt - up.sentAt - latency);
    return { speed, report: report('ok', null) };
  } catch (err) {
    if (ac.signal.aborted) return { speed, report: report('timeout', `the speed test did not finish within ${timeouts.speedMs} ms`) };
    if (err instanceof ProxyStepError) return { speed, report: report(TIMEOUT_KINDS.has(err.kind) ? 'timeout' : 'failed', err.message) };
    if (err instanceof ExchangeError) return { speed, report: report('failed', `the proxy ${err.message} during the speed test`) };
    throw err;
  } finally {
    clearTimeout(timer);
    signal.removeEventListener('abort', onOuter);
    if (open !== null) (open as { channel: Duplex }).channel.destroy();
    for (const s of sockets) s.destroy();
  }
}
