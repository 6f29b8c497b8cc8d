import { readFileSync } from 'node:fs';
import { createServer, type AddressInfo } from 'node:net';

/**
 * The first port of the kernel's ephemeral range (where it picks a listener's port 0 and every
 * client socket's own port), or null where it cannot be read.
 */
function ephemeralLow(): number | null {
  try {
    const low = Number(readFileSync('/proc/sys/net/ipv4/ip_local_port_range', 'utf8').trim().split(/\s+/)[0]);
    return Number.isInteger(low) && low >= FIRST_PICKED + MIN_PICKED ? low : null;
  } catch {
    return null;
  }
}

/** Below the ephemeral range: from here up to it, ports are picked at random. */
const FIRST_PICKED = 20_000;
/** The fewest ports to pick from; with fewer below the ephemeral range, the kernel picks (port 0). */
const MIN_PICKED = 1_000;
const LOW = ephemeralLow();

/** Listens on `port` (0: the kernel's choice) of 127.0.0.1 and closes again: the port, or null when it was taken. */
function tryPort(port: number): Promise<number | null> {
  return new Promise((resolve, reject) => {
    const srv = createServer();
    srv.once('error', (err: NodeJS.ErrnoException) => (err.code === 'EADDRINUSE' || err.code === 'EACCES' ? resolve(null) : reject(err)));
    srv.listen(port, '127.0.0.1', () => {
      const { port: bound } = srv.address() as AddressInfo;
      srv.close(() => resolve(bound));
    });
  });
}

/**
 * A loopback port nobody listens on now, for a server of the test's own that is told its port
 * (redis-server, PostgreSQL) or for a client that must find nothing there. Picked below the
 * kernel's ephemeral range: a port from within it could be given to another process's socket
 * (any connection's own end takes one) between this check and the server's bind, which then
 * failed (seen once in a whole `npm test`: redis-server exited with 1).
 */
export async function freePort(): Promise<number> {
  if (LOW === null) return (await tryPort(0))!;
  for (;;) {
    const port = await tryPort(FIRST_PICKED + Math.floor(Math.random() * (LOW - FIRST_PICKED)));
    if (port !== null) return port;
  }
}
