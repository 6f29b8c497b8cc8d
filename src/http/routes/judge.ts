import { errorCodes, type FastifyInstance, type FastifyRequest } from 'fastify';
import type { Readable } from 'node:stream';
import { JUDGE_UPLOAD_BODY_LIMIT, type ProxyChecker } from '../../domain/proxy/index.js';
import type { NonceUse } from '../../domain/proxy/judge-repository.js';
import { NotFoundError } from '../../errors.js';

/**
 * The judge: outside /api and without a token, because proxies fetch it. It echoes the peer
 * address and the headers that reached it (signed, so a proxy cannot make an echo up), and
 * serves the speed-test payloads, but only for a nonce of a check that is running, and each
 * use of a nonce (echo, download, upload) once; anything else is the same 404 as an unknown
 * path, so it is no open echo service and a replayed URL gets nothing. When the server starts
 * listening, the proxy checker learns its own judge URL (unless NETDIAG_JUDGE_URL or
 * NETDIAG_PUBLIC_URL names one), records the judge it uses in the database for the workers, and
 * learns our own public address through it.
 */
export async function judgeRoutes(app: FastifyInstance, deps: { proxy: ProxyChecker }): Promise<void> {
  const { judge } = deps.proxy;
  app.addHook('onListen', async () => {
    const bound = app.server.address();
    if (typeof bound !== 'object' || !bound) return;
    // Recorded before listen() resolves: a worker that asks from then on finds this judge.
    await deps.proxy.judges.listening({ address: bound.address, port: bound.port }).catch((err: unknown) =>
      app.log.warn({ err }, 'the judge URL could not be recorded in the database: netdiag worker processes without NETDIAG_JUDGE_URL or NETDIAG_PUBLIC_URL have no judge until an instance records one'),
    );
    void deps.proxy.ownAddresses.refresh();
  });

  const nonceOf = (request: FastifyRequest): string => (request.params as { nonce: string }).nonce;
  // Before any body is read: an upload without a live nonce costs us nothing.
  const admit = (use: NonceUse) => async (request: FastifyRequest) => {
    if (!(await judge.admit(nonceOf(request), use))) throw NotFoundError.endpoint(request.method, request.url.split('?')[0] ?? request.url);
  };

  await app.register(async (scope) => {
    // The upload's body is counted, never kept: 128 KiB per check need not be gathered into one Buffer.
    scope.addContentTypeParser('application/octet-stream', (request, payload, done) => countBody(request, payload, JUDGE_UPLOAD_BODY_LIMIT, done));
    scope.addHook('onSend', async (_request, reply) => {
      reply.header('cache-control', 'no-store');
    });
    scope.get('/judge/:nonce', { schema: { hide: true }, onRequest: admit('echo') }, async (request) => {
      return judge.echo(nonceOf(request), request.ip, request.method, request.raw.rawHeaders);
    });
    scope.get('/judge/:nonce/download', { schema: { hide: true }, onRequest: admit('download') }, async (_request, reply) => {
      return reply.type('application/octet-stream').send(judge.downloadPayload);
    });
    scope.post('/judge/:nonce/upload', { schema: { hide: true }, bodyLimit: JUDGE_UPLOAD_BODY_LIMIT, onRequest: admit('upload') }, async (request) => {
      return judge.uploadReceipt(nonceOf(request), typeof request.body === 'number' ? request.body : 0);
    });
  });
}

/**
 * The byte count of a body, with Fastify's own checks of a buffered body (`parseAs`): over
 * `limit` (announced or received) is a 413, a stream error a 400, and a count that differs from
 * Content-Length a 400.
 */
function countBody(request: FastifyRequest, payload: Readable, limit: number, done: (err: Error | null, body?: number) => void): void {
  const announced = Number(request.headers['content-length']);
  if (announced > limit) return done(new errorCodes.FST_ERR_CTP_BODY_TOO_LARGE());
  let received = 0;
  const finish = (err: (Error & { statusCode?: number }) | null, body?: number): void => {
    payload.removeListener('data', onData);
    payload.removeListener('end', onEnd);
    payload.removeListener('error', onEnd);
    done(err, body);
  };
  const onData = (chunk: Buffer | string): void => {
    received += typeof chunk === 'string' ? Buffer.byteLength(chunk) : chunk.length;
    if (received > limit) finish(new errorCodes.FST_ERR_CTP_BODY_TOO_LARGE());
  };
  const onEnd = (err?: Error & { statusCode?: number }): void => {
    if (err) {
      if (!(typeof err.statusCode === 'number' && err.statusCode >= 400)) err.statusCode = 400;
      return finish(err);
    }
    if (!Number.isNaN(announced) && received !== announced) return finish(new errorCodes.FST_ERR_CTP_INVALID_CONTENT_LENGTH());
    finish(null, received);
  };
  payload.on('data', onData);
  payload.on('end', onEnd);
  payload.on('error', onEnd);
  payload.resume();
}
