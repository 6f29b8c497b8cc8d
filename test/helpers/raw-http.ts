import net from 'node:net';

export interface RawResponse {
  status: number;
  headers: Record<string, string>;
  body: string;
  /** Everything the server sent, as text. */
  raw: string;
}

/** Parses the first response of a raw HTTP/1.1 exchange (enough for tests: no chunked bodies). */
export function parseRaw(raw: string): RawResponse {
  const split = raw.indexOf('\r\n\r\n');
  const head = split === -1 ? raw : raw.slice(0, split);
  const [statusLine = '', ...lines] = head.split('\r\n');
  const headers: Record<string, string> = {};
  for (const line of lines) {
    const colon = line.indexOf(':');
    if (colon > 0) headers[line.slice(0, colon).trim().toLowerCase()] = line.slice(colon + 1).trim();
  }
  return { status: Number(statusLine.split(' ')[1] ?? 0), headers, body: split === -1 ? '' : raw.slice(split + 4), raw };
}

/**
 * Sends bytes exactly as given (no client normalises the path: dot segments, percent-encoding
 * and absolute-form reach the server as written) and reads until the server closes.
 */
export function rawRequest(port: number, text: string | Buffer, host = '127.0.0.1'): Promise<RawResponse> {
  return new Promise((resolve, reject) => {
    const socket = net.connect(port, host, () => socket.write(text));
    const chunks: Buffer[] = [];
    socket.on('data', (d: Buffer) => chunks.push(d));
    socket.on('error', reject);
    socket.on('close', () => resolve(parseRaw(Buffer.concat(chunks).toString('latin1'))));
  });
}

/** A request line, headers (Host and Connection: close added) and an optional JSON body. */
export function httpText(method: string, target: string, headers: Record<string, string> = {}, body?: string): string {
  const all: Record<string, string> = { host: 'netdiag.test', connection: 'close', ...headers };
  if (body !== undefined) {
    all['content-type'] ??= 'application/json';
    all['content-length'] = String(Buffer.byteLength(body));
  }
  const head = Object.entries(all).map(([k, v]) => `${k}: ${v}\r\n`).join('');
  return `${method} ${target} HTTP/1.1\r\n${head}\r\n${body ?? ''}`;
}
