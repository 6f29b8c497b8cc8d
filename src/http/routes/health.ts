import type { FastifyInstance } from 'fastify';
import { Type } from 'typebox';
import type { GeoReader } from '../../domain/ip/geoip.js';
import type { PathTools } from '../../domain/path/index.js';
import type { Store } from '../../domain/store.js';
import type { RateLimiter } from '../../domain/usage/rate-limit.js';
import { DATABASE_RETRY_AFTER_S } from '../../error-answers.js';
import { DatabaseSlowError } from '../../errors.js';

/** The build date (YYYY-MM-DD, the mmdb metadata's build epoch) of each GeoIP database in use; null when there is none. */
const GeoIp = Type.Object({ city_build_date: Type.Union([Type.String(), Type.Null()]), asn_build_date: Type.Union([Type.String(), Type.Null()]) });

/** `status` says it all; each dependency that is not fine adds its own field (`database`, `redis`); `geoip` says which data answers. */
const Tool = Type.Object({ available: Type.Boolean(), reason: Type.Union([Type.String(), Type.Null()]), protocols: Type.Optional(Type.Array(Type.String())) });

/**
 * Which path tools run here (docs/path-tools.md); "checking" until the first check (some 3 s
 * after the first ask) has come in. A tool missing is no reason to leave the rotation.
 */
const PathToolsState = Type.Union([Type.Literal('checking'), Type.Object({ ping: Tool, traceroute: Tool, mtr: Tool })]);

/** `status` says it all; each dependency that is not fine adds its own field (`database`, `redis`); `geoip` says which data answers, `path_tools` which path tools run. */
const Health = Type.Object({
  status: Type.String(),
  database: Type.Optional(Type.String()),
  redis: Type.Optional(Type.String()),
  geoip: Type.Optional(GeoIp),
  path_tools: Type.Optional(PathToolsState),
});

/** Liveness and readiness for orchestrators: outside /api, no token, no rate limit. */
export async function healthRoutes(app: FastifyInstance, store: Store, limiter: RateLimiter | null = null, geo: GeoReader | null = null, path: PathTools | null = null): Promise<void> {
  // Redis away is no reason to leave the rotation (each instance then limits by itself): 200, said in the body.
  const redis = () => (limiter?.redisState?.() === 'degraded' ? { redis: 'degraded' } : {});
  // Read at each request: a GeoIP file reloaded under the running server shows its new date at once.
  const geoip = () => (geo ? { geoip: { city_build_date: geo.info.cityBuildDate, asn_build_date: geo.info.asnBuildDate } } : {});
  const pathTools = () => (path ? { path_tools: path.knownAvailability() ?? ('checking' as const) } : {});
  app.get('/healthz', { schema: { hide: true, response: { 200: Health } } }, async () => ({ status: 'ok' }));
  app.get('/readyz', { schema: { hide: true, response: { 200: Health, 503: Health } } }, async (_request, reply) => {
    try {
      await store.ping();
      return { status: 'ready', ...redis(), ...geoip(), ...pathTools() };
    } catch (err) {
      // A database that is slow (its connect or statement timed out, PG_UNRESPONSIVE_MS not
      // reached) is no reason to leave the rotation: every instance on a loaded machine would.
      if (err instanceof DatabaseSlowError) return { status: 'ready', database: 'slow', ...redis(), ...geoip(), ...pathTools() };
      // Answered at once while the store's breaker is open: orchestrators poll this.
      return reply
        .code(503)
        .header('retry-after', String(DATABASE_RETRY_AFTER_S))
        .send({ status: 'database unavailable', database: 'unreachable', ...redis(), ...geoip(), ...pathTools() });
    }
  });
}
