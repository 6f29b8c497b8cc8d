import http from 'node:http';
import https from 'node:https';
import type net from 'node:net';

export interface Received {
  method: string;
  url: string;
  headers: http.IncomingHttpHeaders;
  body: string;
  at: number;
}

export type Answer = (req: http.IncomingMessage, res: http.ServerResponse, n: number) => void;

export interface Receiver {
  url: string;
  port: number;
  received: Received[];
  close(): Promise<void>;
}

/**
 * A webhook receiver on 127.0.0.1, port 0: records every request (whole body) and lets `answer`
 * reply to the n-th (0-based). Closed, with every socket, when the test ends.
 */
export async function startReceiver(answer: Answer, tlsOpts?: { key: Buffer; cert: Buffer }): Promise<Receiver> {
  const received: Received[] = [];
  const sockets = new Set<net.Socket>();
  const handler = (req: http.IncomingMessage, res: http.ServerResponse): void => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const n = received.length;
      received.push({ method: req.method ?? '', url: req.url ?? '', headers: req.headers, body: Buffer.concat(chunks).toString('utf8'), at: Date.now() });
      answer(req, res, n);
    });
  };
  const server = tlsOpts ? https.createServer(tlsOpts, handler) : http.createServer(handler);
  server.on('connection', (s: net.Socket) => {
    sockets.add(s);
    s.on('error', () => undefined);
    s.on('close', () => sockets.delete(s));
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => resolve());
  });
  const port = (server.address() as net.AddressInfo).port;
  return {
    url: `${tlsOpts ? 'https' : 'http'}://127.0.0.1:${port}`,
    port,
    received,
    close: () =>
      new Promise<void>((resolve) => {
        for (const s of sockets) s.destroy();
        server.close(() => resolve());
      }),
  };
}

export const status =
  (code: number, headers: Record<string, string> = {}): Answer =>
  (_req, res) => {
    res.writeHead(code, headers);
    res.end('ok');
  };
