import type net from 'node:net';
import type { TestContext } from 'node:test';

/**
 * Listens on 127.0.0.1, port 0, and closes the server when the test ends, destroying the
 * connections in `sockets` first (the caller tracks them) so a held one cannot keep it open.
 */
export async function listenUntilTestEnds(t: TestContext, server: net.Server, sockets: Set<net.Socket>): Promise<number> {
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  t.after(
    () =>
      new Promise<void>((resolve) => {
        for (const s of sockets) s.destroy();
        server.close(() => resolve());
      }),
  );
  return (server.address() as net.AddressInfo).port;
}
