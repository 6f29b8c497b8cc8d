import type tls from 'node:tls';
import type { Connector } from '../connector.js';
import type { Dialer } from '../dialer.js';
import { checkHttp, type HttpCheckInput, type HttpCheckResult } from './http-check.js';
import { checkTls, type TlsCheckInput, type TlsCheckResult } from './tls-check.js';
import { trustContext } from './trust.js';

export * from './defaults.js';
export { parseCheckUrl, type HttpCheckInput, type HttpCheckResult } from './http-check.js';
export type { TlsCheckInput, TlsCheckResult } from './tls-check.js';
export type { CertificateInfo, ChainEntry } from './certificate.js';

export interface CheckerOptions {
  /** Resolves and checks the targets (the target policy). */
  dialer: Pick<Dialer, 'resolve'>;
  /** Connects to the checked addresses, TLS and the request on them. */
  connector: Connector;
  /** PEM text of CA certificates trusted besides Node's roots (NETDIAG_EXTRA_CA_CERTS). */
  extraCaPem?: string | undefined;
  now?: () => number;
}

/** The HTTP and TLS checks of one process: one dialer, one trust store. */
export class Checker {
  readonly #dialer: CheckerOptions['dialer'];
  readonly #connector: Connector;
  readonly #extraCaPem: string | undefined;
  #trust: tls.SecureContext | undefined;
  readonly #now: () => number;

  constructor(opts: CheckerOptions) {
    this.#dialer = opts.dialer;
    this.#connector = opts.connector;
    this.#extraCaPem = opts.extraCaPem;
    this.#now = opts.now ?? Date.now;
  }

  /** Built at the first check, not with the app: loading the CA store costs some 45 ms of CPU, which an app that is never asked a check (a worker, a test) need not pay. */
  get #context(): tls.SecureContext {
    return (this.#trust ??= trustContext(this.#extraCaPem));
  }

  http(input: HttpCheckInput, signal: AbortSignal): Promise<HttpCheckResult> {
    return checkHttp({ dialer: this.#dialer, connector: this.#connector, context: this.#context }, input, signal);
  }

  tls(input: TlsCheckInput, signal: AbortSignal): Promise<TlsCheckResult> {
    return checkTls({ dialer: this.#dialer, connector: this.#connector, context: this.#context, now: this.#now }, input, signal);
  }
}
