import { load, startServer, summary } from './lib.js';

/**
 * Issue 5: POST /api/ip/lookup-bulk with 100 addresses (no security_check) through the whole
 * API. One connection gives the time a single bulk takes (server time plus loopback); ten give
 * the requests/s a server sustains. Run: node --import tsx bench/ip-bulk.ts
 */
const ips = Array.from({ length: 100 }, (_, i) => (i % 4 === 3 ? `2a03:2880:f0${(i % 90) + 10}::${i}` : `${(i * 37) % 223 + 1}.${(i * 91) % 256}.${(i * 13) % 256}.${i}`));
const body = JSON.stringify({ ips });
const server = await startServer('./servers/netdiag.ts');
const headers = { authorization: `Bearer ${server.info.token}`, 'content-type': 'application/json' };
const url = `${server.url}/api/ip/lookup-bulk`;
const single = await load(url, headers, 8, { method: 'POST', body, connections: 1 });
const many = await load(url, headers, 8, { method: 'POST', body, connections: 10 });
await server.stop();
console.log(summary('lookup-bulk ×100, 1 connection  ', single), `mean ${single.latency.mean} ms`);
console.log(summary('lookup-bulk ×100, 10 connections', many));
