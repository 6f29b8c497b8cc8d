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

/**
 * One connect in flight: its handle, its timer and its listener, one object rather than a closure
 * each (a full-range scan makes 65535 of them; under tsx every closure is also named at creation).
 * The connect request calls `oncomplete` with itself as `this`, so it carries its probe.
 */
class Probe {
  readonly handle: TcpHandle;
  readonly started = performance.now();
  readonly resolve: (r: RawConnectResult) => void;
  readonly reject: (reason: unknown) => void;
  readonly signal: AbortSignal | undefined;
  timer: NodeJS.Timeout | undefined;
  settled = false;

  constructor(handle: TcpHandle, resolve: (r: RawConnectResult) => void, reject: (reason: unknown) => void, signal: AbortSignal | undefined) {
    this.handle = handle;
    this.resolve = resolve;
    this.reject = reject;
    this.signal = signal;
  }

  finish(code: string | null, localPort: number | null = null, localAddress: string | null = null): void {
    this.settled = true;
    clearTimeout(this.timer);
    if (this.signal) inFlight.get(this.signal)?.delete(this);
    // An established connection is reset rather than closed: no TIME_WAIT per open port,
    // and the far end drops it at once instead of waiting for us to talk.
    const reset = code === null && typeof this.handle.reset === 'function' && this.handle.reset(ignore) === 0;
    if (!reset) this.handle.close();
    this.resolve({ code, elapsedMs: round2(performance.now() - this.started), localPort, localAddress });
  }

  /** The signal's abort. */
  abort(): void {
    if (this.settled) return;
    this.settled = true;
    clearTimeout(this.timer);
    this.handle.close();
    this.reject(this.signal?.reason);
  }
}

function ignore(): void {}

/**
 * The probes in flight under each signal, which its one abort listener ends: a listener added and
 * removed per probe (Node's EventTarget validates and wraps each) cost a 65535-port scan with a
 * signal some 5 µs a port, a sixth of its time.
 */
const inFlight = new WeakMap<AbortSignal, Set<Probe>>();

function watch(signal: AbortSignal, probe: Probe): void {
  let probes = inFlight.get(signal);
  if (!probes) {
    const set = (probes = new Set<Probe>());
    inFlight.set(signal, set);
    signal.addEventListener('abort', () => {
      for (const p of set) p.abort();
      set.clear();
    }, { once: true });
  }
  probes.add(probe);
}

/**
 * A port is filtered only when no answer came within the timeout, however long the event loop's
 * iterations: timers run before the poll phase, where an answer that arrived during a long one (a
 * busy machine, thousands of answers at once) is still waiting to be read. The verdict is given
 * after that phase (setImmediate), so such an answer wins.
 */
function onTimeout(probe: Probe): void {
  if (!probe.settled) setImmediate(expire, probe);
}

function expire(probe: Probe): void {
  if (!probe.settled) probe.finish('ETIMEDOUT');
}

function onComplete(this: ConnectReq & { probe: Probe }, status: number): void {
  const { probe } = this;
  // Closing a handle mid-connect completes the request with ECANCELED; it is already answered.
  if (probe.settled) return;
  if (status !== 0) return probe.finish(codeOf(status));
  const local: { address?: string; port?: number } = {};
  probe.handle.getsockname(local);
  probe.finish(null, local.port ?? null, local.address ?? null);
}

function makeRawConnect(binding: TcpWrapBinding): RawConnect {
  const { TCP, TCPConnectWrap, constants } = binding;
  return (host, family, port, timeoutMs, signal) =>
    new Promise<RawConnectResult>((resolve, reject) => {
      const probe = new Probe(new TCP(constants.SOCKET), resolve, reject, signal);
      const req = new TCPConnectWrap() as ConnectReq & { probe: Probe };
      req.address = host;
      req.port = port;
      req.probe = probe;
      req.oncomplete = onComplete;
      probe.timer = setTimeout(onTimeout, timeoutMs, probe);
      if (signal?.aborted) return probe.abort();
      if (signal) watch(signal, probe);
      const err = family === 4 ? probe.handle.connect(req, host, port) : probe.handle.connect6(req, host, port);
      if (err !== 0) probe.finish(codeOf(err));
    });
}

const binding = loadBinding();

/** The raw connect, or null where this Node has no `tcp_wrap` binding to offer. */
export const rawConnect: RawConnect | null = binding ? makeRawConnect(binding) : null;
