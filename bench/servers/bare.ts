import Fastify from 'fastify';

/** The baseline: bare Fastify answering the same JSON as GET /api/user, no auth, no envelope work. */
const user = {
  success: true,
  data: {
    id: 1,
    name: 'Bench',
    email: 'bench@example.com',
    plan: 'enterprise',
    api_calls_used: 0,
    api_calls_limit: 50000,
    rate_limit: { requests_per_minute: 120, requests_per_hour: 5000, requests_per_day: 50000 },
    created_at: '2026-01-01T00:00:00.000Z',
  },
  message: 'account retrieved',
};
const app = Fastify({ logger: false });
app.get('/api/user', async () => user);
if (process.env.BENCH_DEFER) {
  // Holds every response until a setImmediate, as netdiag's group commit does (one batch per iteration of the event loop).
  let pending: Array<() => void> = [];
  const release = () => {
    const batch = pending;
    pending = [];
    for (const go of batch) go();
  };
  app.addHook('onSend', (_request, _reply, payload, done) => {
    if (pending.length === 0) setImmediate(release);
    pending.push(() => done(null, payload));
  });
}
await app.listen({ port: 0, host: '127.0.0.1' });
const address = app.server.address();
process.stdout.write(JSON.stringify({ url: `http://127.0.0.1:${typeof address === 'object' && address ? address.port : 0}` }) + '\n');
process.once('SIGTERM', () => void app.close().then(() => process.exit(0)));
