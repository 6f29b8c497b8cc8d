import type { FastifyInstance, FastifyRequest } from 'fastify';
import { JUDGE_UPLOAD_BODY_LIMIT, type NonceUse, type ProxyChecker } from '../../domain/proxy/index.js';
import { NotFoundError } from '../../errors.js';

/**
 * The judge: outside /api and without a token, because proxies fetch it. It echoes the peer
 * address and the headers that reached it (signed, so a proxy cannot make an echo up), and
 * serves the speed-test payloads, but only for a nonce of a check that is running, and each
 * use of a nonce (echo, download, upload) once; anything else is the same 404 as an unknown
 * path, so it is no open echo service and a replayed URL gets nothing. When the server starts
 * listening, the proxy checker learns its own judge URL (unless NETDIAG_JUDGE_URL names one)
 * and, through it, our own public address.
 */
export async function judgeRoutes(app: FastifyInstance, deps: { proxy: ProxyChecker }): Promise<void> {
  const { judge } = deps.proxy;
  app.addHook('onListen', async () => {
    const bound = app.server.address();
    if (typeof bound === 'object' && bound) void deps.proxy.listening({ address: bound.address, port: bound.port });
  });

  const nonceOf = (request: FastifyRequest): string => (request.params as { nonce: string }).nonce;
  // Before any body is read: an upload without a live nonce costs us nothing.
  const admit = (use: NonceUse) => async (request: FastifyRequest) => {
    if (!(await judge.admit(nonceOf(request), use))) throw new NotFoundError(request.method, request.url.split('?')[0] ?? request.url);
  };

  await app.register(async (scope) => {
    scope.addContentTypeParser('application/octet-stream', { parseAs: 'buffer', bodyLimit: JUDGE_UPLOAD_BODY_LIMIT }, (_request, body, done) => done(null, body));
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
      return judge.uploadReceipt(nonceOf(request), Buffer.isBuffer(request.body) ? request.body.length : 0);
    });
  });
}
