import { createConnection, createServer, type Server, type Socket } from 'node:net';
import type { TestContext } from 'node:test';

/**
 * A loopback TCP proxy that holds every chunk `delayMs` (in each direction, order kept) before
 * passing it on: a server that is slow but alive (a loaded machine), as opposed to one that is
 * gone. `stop()` refuses new connections and cuts the open ones (the server is gone); `start()`
 * listens again on the same port (it is back).
 */
export interface DelayProxy {
  readonly port: number;
  /** Each chunk's delay, read when the chunk arrives: change it at any time. */
  delayMs: number;
  /** Cuts the open connections (new ones go through with the current delay). */
  cut(): void;
  stop(): Promise<void>;
  start(): Promise<void>;
}

export async function startDelayProxy(t: TestContext, target: { host: string; port: number }, delayMs = 0): Promise<DelayProxy> {
  const sockets = new Set<Socket>();
  let server: Server | null = null;
  let port = 0;
  const pipe = (from: Socket, to: Socket) => {
    // Each chunk leaves no sooner than `delayMs` after it came, and never before the one before it.
    let last = Promise.resolve();
    from.on('data', (chunk: Buffer) => {
      const due = Date.now() + proxy.delayMs;
      last = last.then(
        () =>
          new Promise<void>((resolve) => {
            setTimeout(() => {
              if (!to.destroyed) to.write(chunk);
              resolve();
            }, Math.max(0, due - Date.now()));
          }),
      );
    });
    // The other side hears the end once what came before it has gone through.
    const end = () => void last.then(() => to.destroy());
    from.on('close', end);
    from.on('error', () => undefined);
  };
  const listen = async () => {
    const s = createServer((client) => {
      const upstream = createConnection(target);
      for (const socket of [client, upstream]) {
        sockets.add(socket);
        socket.on('close', () => sockets.delete(socket));
      }
      pipe(client, upstream);
      pipe(upstream, client);
    });
    await new Promise<void>((resolve, reject) => {
      s.once('error', reject);
      s.listen(port, '127.0.0.1', () => resolve());
    });
    port = (s.address() as { port: number }).port;
    server = s;
  };
  const cut = () => {
    for (const socket of sockets) socket.destroy();
  };
  const stop = async () => {
    const s = server;
    server = null;
    cut();
    if (s) await new Promise<void>((resolve) => s.close(() => resolve()));
  };
  const proxy: DelayProxy = {
    get port() {
      return port;
    },
    delayMs,
    cut,
    stop,
    start: listen,
  };
  await listen();
  t.after(stop);
  return proxy;
}
