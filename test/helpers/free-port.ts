import { createServer, type AddressInfo } from 'node:net';

/**
 * A loopback port nobody listened on a moment ago, for a server of the test's own that is told
 * its port (redis-server, PostgreSQL) or for a client that must find nothing there.
 */
export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const srv = createServer();
    srv.once('error', reject);
    srv.listen(0, '127.0.0.1', () => {
      const { port } = srv.address() as AddressInfo;
      srv.close(() => resolve(port));
    });
  });
}
