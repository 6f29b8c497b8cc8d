import { load, startServer, summary } from './lib.js';

/**
 * Issue 2's figure: requests/s of an authenticated GET /api/user against bare Fastify answering
 * the same JSON, in the same run. Run: node --import tsx bench/auth-overhead.ts
 */
const bare = await startServer('./servers/bare.ts');
const baseline = await load(`${bare.url}/api/user`);
await bare.stop();

const nd = await startServer('./servers/netdiag.ts');
const authed = await load(`${nd.url}/api/user`, { authorization: `Bearer ${nd.info.token}` });
await nd.stop();

console.log(summary('bare Fastify          ', baseline));
console.log(summary('netdiag GET /api/user ', authed));
console.log(`ratio: ${(authed.requests.average / baseline.requests.average).toFixed(3)} of bare Fastify's requests/s`);
