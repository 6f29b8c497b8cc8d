import assert from 'node:assert/strict';
import { test, type TestContext } from 'node:test';
import type { FastifyRequest } from 'fastify';
import { checkMcpOrigin } from '../../src/http/routes/mcp.js';
import { ForbiddenError } from '../../src/errors.js';
import { build, type Built } from '../helpers/build.js';

/**
 * POST /mcp validates `Origin` (MCP Streamable HTTP: servers MUST, against DNS rebinding), through
 * the real app: clients that send none pass, this server's own origin passes, anything else is a
 * 403 with the API's envelope.
 */

const INITIALIZE = {
  jsonrpc: '2.0',
  id: 1,
  method: 'initialize',
  params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'origin-test', version: '1.0.0' } },
};

async function mcp(b: Built, headers: Record<string, string>): Promise<{ status: number; body: Record<string, unknown> }> {
  const res = await b.app.inject({
    method: 'POST',
    url: '/mcp',
    headers: { authorization: `Bearer ${b.token}`, accept: 'application/json, text/event-stream', 'content-type': 'application/json', ...headers },
    payload: JSON.stringify(INITIALIZE),
  });
  return { status: res.statusCode, body: res.json() as Record<string, unknown> };
}

async function server(t: TestContext, env: Record<string, string> = {}): Promise<Built> {
  return build(t, { env });
}

test('no Origin (a client that is no browser) and this server\'s own origin pass', async (t) => {
  const b = await server(t);
  const port = new URL(b.url).port;
  const passing: Array<Record<string, string>> = [
    {},
    { host: `127.0.0.1:${port}`, origin: `http://127.0.0.1:${port}` },
    { host: `localhost:${port}`, origin: `http://localhost:${port}` },
    { host: `[::1]:${port}`, origin: `http://[::1]:${port}` },
    { host: '127.0.0.1', origin: 'http://127.0.0.1:80' },
  ];
  for (const headers of passing) {
    const { status, body } = await mcp(b, headers);
    assert.equal(status, 200, `${JSON.stringify(headers)}: ${JSON.stringify(body)}`);
    assert.equal((body.result as { serverInfo: { name: string } }).serverInfo.name.length > 0, true);
  }
});

test('a foreign Origin, Origin: null and a rebinding Host are 403 forbidden, with a message to act on', async (t) => {
  const b = await server(t);
  const port = new URL(b.url).port;
  const refused: Array<Record<string, string>> = [
    { origin: 'https://evil.example' },
    { origin: 'null' },
    { origin: 'not an origin' },
    // A port or scheme of its own is another origin.
    { host: `127.0.0.1:${port}`, origin: `http://127.0.0.1:${Number(port) + 1}` },
    { host: `127.0.0.1:${port}`, origin: `https://127.0.0.1:${port}` },
    // DNS rebinding: evil.example now resolves to this server, and its page names itself in both.
    { host: `evil.example:${port}`, origin: `http://evil.example:${port}` },
  ];
  for (const headers of refused) {
    const { status, body } = await mcp(b, headers);
    assert.equal(status, 403, JSON.stringify(headers));
    assert.equal(body.success, false);
    assert.equal(body.error, 'forbidden');
    assert.match(String(body.message), /^POST \/mcp refuses browser requests from the origin .*: only this server's own origin \(NETDIAG_PUBLIC_URL\)/);
  }
});

test('NETDIAG_PUBLIC_URL is this server\'s own origin, whatever Host the request came to', async (t) => {
  const b = await server(t, { NETDIAG_PUBLIC_URL: 'https://netdiag.example.com' });
  assert.equal((await mcp(b, { host: 'netdiag.example.com', origin: 'https://netdiag.example.com' })).status, 200);
  assert.equal((await mcp(b, { origin: 'https://NETDIAG.example.com:443' })).status, 200, 'compared as serialised origins');
  assert.equal((await mcp(b, { origin: 'https://netdiag.example.com:8443' })).status, 403);
  assert.equal((await mcp(b, { origin: 'http://netdiag.example.com' })).status, 403);
});

test('the operator\'s allowed origins (corsOrigins) pass; others do not', () => {
  const request = (origin: string) => ({ headers: { origin }, hostname: 'netdiag.example.com', host: 'netdiag.example.com', protocol: 'https' }) as unknown as FastifyRequest;
  const origins = { publicUrl: undefined, corsOrigins: ['https://tools.example.com'] };
  assert.doesNotThrow(() => checkMcpOrigin(request('https://tools.example.com'), origins));
  assert.throws(() => checkMcpOrigin(request('https://other.example.com'), origins), ForbiddenError);
  // Without NETDIAG_PUBLIC_URL a named Host proves nothing (it may be a rebinding).
  assert.throws(() => checkMcpOrigin(request('https://netdiag.example.com'), origins), ForbiddenError);
});

test('an origin NETDIAG_CORS_ORIGINS allows for /api may call /mcp too; a wildcard opens no origin to /mcp', async (t) => {
  const listed = await server(t, { NETDIAG_CORS_ORIGINS: 'https://tools.example.com' });
  assert.equal((await mcp(listed, { origin: 'https://tools.example.com' })).status, 200);
  assert.equal((await mcp(listed, { origin: 'https://evil.example' })).status, 403);
  const any = await server(t, { NETDIAG_CORS_ORIGINS: '*' });
  assert.equal((await mcp(any, { origin: 'https://evil.example' })).status, 403);
});
