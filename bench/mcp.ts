import http from 'node:http';
import { load, startServer, summary, type ChildServer, type LoadResult } from './lib.js';
import { median } from './stats.js';

/**
 * Issue 26: what MCP adds to a call. The MCP `tools/call` of ipv6_expand over HTTP (POST /mcp,
 * stateless Streamable HTTP, JSON answer) against the same call made directly
 * (POST /api/ipv6/expand), on the same server process in the same round, the order of the two
 * alternating between rounds; a fresh server each round (see auth-overhead.ts for why). Reports
 * the median over rounds of each one's requests/s and of the per-call time ratio MCP/API (the
 * inverse of the requests/s ratio, taken within each round), and the server CPU per request.
 * Then, on the same server, the latency of one call at a time over one keep-alive connection, as
 * an MCP client makes its calls (it waits for each answer): LATENCY_CALLS of each, in alternating
 * blocks, the median of each and their ratio.
 *   node --import tsx bench/mcp.ts     (BENCH_SECONDS, BENCH_ROUNDS to change)
 */
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 5);
const LATENCY_CALLS = 2000;
const LATENCY_BLOCK = 250;

const ADDRESS = '2001:db8::1';
const json = (token: string) => ({ authorization: `Bearer ${token}`, 'content-type': 'application/json' });
const api = (s: ChildServer) =>
  load(`${s.url}/api/ipv6/expand`, json(s.info.token!), undefined, { method: 'POST', body: JSON.stringify({ ipv6: ADDRESS }) }, s);
const mcp = (s: ChildServer) =>
  load(
    `${s.url}/mcp`,
    // What an MCP client sends once initialized (stateless: no session id).
    { ...json(s.info.token!), accept: 'application/json, text/event-stream', 'mcp-protocol-version': '2025-06-18' },
    undefined,
    { method: 'POST', body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'ipv6_expand', arguments: { ipv6: ADDRESS } } }) },
    s,
  );

const API_BODY = JSON.stringify({ ipv6: ADDRESS });
const MCP_BODY = JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'ipv6_expand', arguments: { ipv6: ADDRESS } } });

/** ms from sending `body` to the end of the answer, on `agent`'s one connection. */
function timedPost(s: ChildServer, agent: http.Agent, path: string, body: string, headers: Record<string, string>): Promise<number> {
  const url = new URL(path, s.url);
  return new Promise((resolve, reject) => {
    const started = performance.now();
    const req = http.request(url, { method: 'POST', agent, headers: { ...headers, 'content-length': Buffer.byteLength(body) } }, (res) => {
      res.resume();
      res.on('end', () => (res.statusCode === 200 ? resolve(performance.now() - started) : reject(new Error(`${path}: HTTP ${res.statusCode}`))));
    });
    req.on('error', reject);
    req.end(body);
  });
}

/** One call at a time, API and MCP in alternating blocks: each one's latencies, ms. */
async function latencies(s: ChildServer): Promise<{ api: number[]; mcp: number[] }> {
  const agent = new http.Agent({ keepAlive: true, maxSockets: 1 });
  const apiHeaders = json(s.info.token!);
  const mcpHeaders = { ...apiHeaders, accept: 'application/json, text/event-stream', 'mcp-protocol-version': '2025-06-18' };
  const out = { api: [] as number[], mcp: [] as number[] };
  // One block of each first, not counted: the connection and both paths warm.
  for (let block = -1; block < LATENCY_CALLS / LATENCY_BLOCK; block++) {
    for (const which of block % 2 === 0 ? (['api', 'mcp'] as const) : (['mcp', 'api'] as const)) {
      for (let i = 0; i < LATENCY_BLOCK; i++) {
        const ms = await (which === 'api' ? timedPost(s, agent, '/api/ipv6/expand', API_BODY, apiHeaders) : timedPost(s, agent, '/mcp', MCP_BODY, mcpHeaders));
        if (block >= 0) out[which].push(ms);
      }
    }
  }
  agent.destroy();
  return out;
}

const results = { api: [] as LoadResult[], mcp: [] as LoadResult[] };
const latency = { api: [] as number[], mcp: [] as number[], ratios: [] as number[] };
const ratios: number[] = [];
const cpuRatios: number[] = [];
for (let round = 0; round < ROUNDS; round++) {
  const server = await startServer('./servers/netdiag.ts');
  try {
    const order = round % 2 === 0 ? (['api', 'mcp'] as const) : (['mcp', 'api'] as const);
    const r: Partial<Record<'api' | 'mcp', LoadResult>> = {};
    for (const which of order) r[which] = await (which === 'api' ? api : mcp)(server);
    for (const which of order) {
      const res = r[which]!;
      if (res.non2xx > 0 || res.errors > 0) throw new Error(`${which}: ${summary(which, res)}`);
      results[which].push(res);
    }
    ratios.push(r.api!.requests.average / r.mcp!.requests.average);
    if (r.api!.serverCpuPerRequest !== null && r.mcp!.serverCpuPerRequest !== null) cpuRatios.push(r.mcp!.serverCpuPerRequest / r.api!.serverCpuPerRequest);
    const l = await latencies(server);
    latency.api.push(median(l.api));
    latency.mcp.push(median(l.mcp));
    latency.ratios.push(median(l.mcp) / median(l.api));
  } finally {
    await server.stop();
  }
}

const perRound = (rs: LoadResult[]) => rs.map((r) => `${Math.round(r.requests.average)}${r.serverCpuPerRequest !== null ? `/${r.serverCpuPerRequest.toFixed(1)}µs` : ''}`).join(', ');
for (const [name, rs] of [['POST /api/ipv6/expand', results.api], ['POST /mcp tools/call ipv6_expand', results.mcp]] as const) {
  const rps = median(rs.map((r) => r.requests.average));
  console.log(`${name.padEnd(34)} median ${Math.round(rps)} req/s  (rounds: ${perRound(rs)})`);
}
console.log(`per-call time MCP/API: median ${median(ratios).toFixed(3)} (rounds: ${ratios.map((x) => x.toFixed(3)).join(', ')})`);
if (cpuRatios.length > 0) console.log(`server CPU per call MCP/API: median ${median(cpuRatios).toFixed(3)} (rounds: ${cpuRatios.map((x) => x.toFixed(3)).join(', ')})`);
const ms = (xs: number[]) => `${(median(xs) * 1000).toFixed(0)} µs (rounds: ${xs.map((x) => (x * 1000).toFixed(0)).join(', ')})`;
console.log(`one call at a time, median latency: API ${ms(latency.api)}; MCP ${ms(latency.mcp)}`);
console.log(`latency MCP/API: median ${median(latency.ratios).toFixed(3)} (rounds: ${latency.ratios.map((x) => x.toFixed(3)).join(', ')})`);
