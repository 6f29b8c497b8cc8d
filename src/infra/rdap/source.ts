import { open } from 'node:fs/promises';
import { join } from 'node:path';
import { RDAP_ACCEPT, RDAP_BOOTSTRAP_MAX_BYTES, RDAP_BOOTSTRAP_TIMEOUT_MS } from '../../domain/rdap/defaults.js';
import type { BootstrapKind, BootstrapSource, RdapHttp } from '../../domain/rdap/types.js';

/** NETDIAG_RDAP_BOOTSTRAP as a base URL: `${base}${kind}.json`, one GET through the dialer, bounded, no redirect. */
export class UrlBootstrapSource implements BootstrapSource {
  readonly where: string;
  readonly #http: RdapHttp;

  constructor(base: string, http: RdapHttp) {
    this.where = base.endsWith('/') ? base : `${base}/`;
    this.#http = http;
  }

  async fetch(kind: BootstrapKind, signal: AbortSignal): Promise<string> {
    const url = new URL(`${kind}.json`, this.where);
    const res = await this.#http.get(url, { timeoutMs: RDAP_BOOTSTRAP_TIMEOUT_MS, maxBytes: RDAP_BOOTSTRAP_MAX_BYTES, signal, accept: `application/json, ${RDAP_ACCEPT}` });
    if (res.truncated) throw new Error(`${url.href}: larger than ${RDAP_BOOTSTRAP_MAX_BYTES} bytes`);
    if (res.status !== 200) throw new Error(`${url.href}: HTTP ${res.status}`);
    return new TextDecoder('utf-8').decode(res.body);
  }
}

/** NETDIAG_RDAP_BOOTSTRAP as a directory holding dns.json, ipv4.json, ipv6.json, asn.json (read bounded). */
export class DirectoryBootstrapSource implements BootstrapSource {
  readonly where: string;

  constructor(dir: string) {
    this.where = dir;
  }

  async fetch(kind: BootstrapKind, signal: AbortSignal): Promise<string> {
    const path = join(this.where, `${kind}.json`);
    const file = await open(path, 'r');
    try {
      const buf = Buffer.alloc(RDAP_BOOTSTRAP_MAX_BYTES + 1);
      let length = 0;
      while (length < buf.length) {
        signal.throwIfAborted();
        const { bytesRead } = await file.read(buf, length, buf.length - length, null);
        if (bytesRead === 0) break;
        length += bytesRead;
      }
      if (length > RDAP_BOOTSTRAP_MAX_BYTES) throw new Error(`${path}: larger than ${RDAP_BOOTSTRAP_MAX_BYTES} bytes`);
      return buf.subarray(0, length).toString('utf8');
    } finally {
      await file.close();
    }
  }
}

export function bootstrapSource(where: string, http: RdapHttp): BootstrapSource {
  return /^https?:\/\//i.test(where) ? new UrlBootstrapSource(where, http) : new DirectoryBootstrapSource(where);
}
