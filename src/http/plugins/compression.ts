import { constants } from 'node:zlib';
import fastifyCompress from '@fastify/compress';
import type { FastifyInstance, onSendHookHandler } from 'fastify';

/** Bodies smaller than this go as they are: below a packet or two, compressing saves nothing worth its CPU. */
export const COMPRESSION_THRESHOLD_BYTES = 1024;
/**
 * Brotli's quality. zlib's default, 11, spent 85 ms of CPU on the 191 KB OpenAPI document and
 * 165 ms on a 1000-port scan's 176 KB in a measurement, for every answer; 4 spent 1.0 and 0.4 ms
 * and came to 11.1 % and 3.2 % of the size (11: 9.1 % and 1.9 %).
 */
export const BROTLI_QUALITY = 4;
/** gzip's level: zlib's default (1.4 and 0.4 ms there, 11.2 % and 3.8 %). */
export const GZIP_LEVEL = 6;

/**
 * JSON (`application/json`, `application/problem+json`) and text (`text/html`, `text/csv`,
 * `text/plain`...). Never `text/event-stream` nor `application/x-ndjson`: a stream's events must
 * go out as they come, and a compressor holds them back until its window fills.
 */
export const COMPRESSIBLE_TYPES = /^(?:application\/(?:[\w.-]+\+)?json|text\/[\w.+-]+)\s*(?:;|$)/i;
/** Text that is a stream of events, never compressed (checked after COMPRESSIBLE_TYPES). */
export const STREAM_TYPE = /^text\/event-stream\s*(?:;|$)/i;

/** Paths answered as they are: the judge is fetched through proxies that must see what a plain web server sends. */
const UNCOMPRESSED_PREFIXES = ['/judge'];

/**
 * gzip or br, as the client's Accept-Encoding prefers, for JSON and text answers of
 * COMPRESSION_THRESHOLD_BYTES or more (with `Vary: Accept-Encoding`). Request bodies are not
 * decompressed: a compressed body stays a 400, as before. Registered before the routes (it hooks
 * each as it is added), so its onSend is the route's own first: an onSend that a later onRoute
 * hook adds to a route, and that reads the body, goes in front of it (src/http/openapi.ts).
 */
export async function registerCompression(app: FastifyInstance): Promise<void> {
  app.addHook('onRoute', (route) => {
    if (UNCOMPRESSED_PREFIXES.some((prefix) => route.url === prefix || route.url.startsWith(`${prefix}/`))) route.compress = false;
  });
  await app.register(fastifyCompress, {
    global: true,
    globalDecompression: false,
    encodings: ['br', 'gzip'],
    threshold: COMPRESSION_THRESHOLD_BYTES,
    customTypes: (type: string) => COMPRESSIBLE_TYPES.test(type) && !STREAM_TYPE.test(type),
    brotliOptions: { params: { [constants.BROTLI_PARAM_QUALITY]: BROTLI_QUALITY } },
    zlibOptions: { level: GZIP_LEVEL },
  });
  // Added after the plugin's own, so it runs after the compression: a strong ETag names one
  // sequence of bytes, and the compressed answer is another (RFC 9110 8.8.3); If-None-Match
  // compares weakly, so the weak tag still brings the 304.
  app.addHook('onRoute', (route) => {
    if (route.compress === false) return;
    const hooks = route.onSend === undefined ? [] : Array.isArray(route.onSend) ? route.onSend : [route.onSend];
    route.onSend = [...hooks, weakenEncodedEtag];
  });
}

const weakenEncodedEtag: onSendHookHandler = (_request, reply, payload, done) => {
  const etag = reply.getHeader('etag');
  if (typeof etag === 'string' && etag.startsWith('"') && reply.getHeader('content-encoding') !== undefined) reply.header('etag', `W/${etag}`);
  done(null, payload);
};
