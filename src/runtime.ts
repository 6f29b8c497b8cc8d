import type { FastifyBaseLogger } from 'fastify';
import type { Composition } from './compose.js';

/**
 * What `netdiag serve` (src/server.ts) and `netdiag worker` (src/worker.ts) both do to the process
 * they run in: SIGHUP rereads the GeoIP files, SIGTERM/SIGINT close and exit.
 * Nothing here loads HTTP code: the worker imports it without the server.
 */

/**
 * SIGHUP reads the operator's GeoIP files (NETDIAG_GEOIP_CITY_DB / NETDIAG_GEOIP_ASN_DB) again
 * now, changed or not, for file systems whose changes neither fs.watch nor the poll notices in
 * time; requests go on being answered by the data in use until the new files opened fine.
 */
export function reloadGeoOnSighup(services: Pick<Composition, 'reloadGeo' | 'log'>): void {
  process.on('SIGHUP', () => {
    services.log.info('SIGHUP: reading the GeoIP files again');
    void services.reloadGeo();
  });
}

/**
 * On SIGTERM or SIGINT (once): logs `start`, runs `close`, and exits 0 when it is done, 1 when it
 * fails (`failed`) or is still running after `graceMs` (`late`).
 */
export function exitOnSignals(log: Pick<FastifyBaseLogger, 'info' | 'error'>, graceMs: number, close: () => Promise<void>, say: { start: string; late: string; failed: string }): void {
  let closing = false;
  const shutdown = (signal: string): void => {
    if (closing) return;
    closing = true;
    log.info({ signal, graceS: graceMs / 1000 }, say.start);
    const force = setTimeout(() => {
      log.error({ graceS: graceMs / 1000 }, say.late);
      process.exit(1);
    }, graceMs);
    force.unref();
    close().then(
      () => process.exit(0),
      (err: unknown) => {
        log.error({ err }, say.failed);
        process.exit(1);
      },
    );
  };
  process.once('SIGTERM', () => shutdown('SIGTERM'));
  process.once('SIGINT', () => shutdown('SIGINT'));
}
