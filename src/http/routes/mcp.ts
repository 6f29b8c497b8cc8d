import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { WebStandardStreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/webStandardStreamableHttp.js';
import { ValidationError } from '../../errors.js';
import { mcpServer, type CallEndpoint } from '../../mcp/tools.js';
import { clientGoneSignal } from '../client-gone.js';
import { API_PREFIX } from '../plugins/auth.js';

/** Where MCP's Streamable HTTP transport is served (API.md, "MCP"). */
export const MCP_PATH = '/mcp';

/**
 * The most JSON-RPC messages one POST may carry. MCP dropped batches in its 2025-06-18 revision;
 * the SDK still takes them (up to 100). Each tool call in one is a call of its endpoint,
 * counted and limited as such; this only keeps one request from starting more work than the
 * smallest plan may do in a minute (free: 10 calls).
 */
export const MCP_MAX_BATCH = 10;

/** The rate-limit headers of a tool call's answer, carried over to the /mcp response. */
const RATE_HEADERS = ['x-ratelimit-limit', 'x-ratelimit-remaining', 'x-ratelimit-reset', 'ratelimit-policy'] as const;

/** The request headers the SDK's transport reads (content negotiation and the protocol version). */
const TRANSPORT_HEADERS = ['accept', 'content-type', 'mcp-protocol-version'] as const;

function webRequestOf(request: FastifyRequest): Request {
  const headers = new Headers();
  for (const name of TRANSPORT_HEADERS) {
    const value = request.headers[name];
    if (typeof value === 'string') headers.set(name, value);
  }
  return new Request(`http://netdiag${MCP_PATH}`, { method: 'POST', headers });
}

/**
 * A tool call made inside the app: `POST /api<path>` injected with the caller's Authorization
 * header and address, so it passes every hook a call over the network passes (authentication,
 * rate windows, work in flight, validation, the target policy, the serializer, usage recording
 * under that endpoint) by construction. A probe is abandoned when the MCP client hangs up.
 */
function callThroughApi(app: FastifyInstance, request: FastifyRequest, reply: FastifyReply): CallEndpoint {
  let gone: AbortSignal | undefined;
  return async (path, body, signal) => {
    gone ??= clientGoneSignal(reply);
    const res = await app.inject({
      method: 'POST',
      url: API_PREFIX + path,
      headers: { 'content-type': 'application/json', ...(request.headers.authorization ? { authorization: request.headers.authorization } : {}) },
      payload: JSON.stringify(body),
      remoteAddress: request.ip,
      signal: AbortSignal.any([gone, signal]),
      validate: false,
    });
    // The /mcp response tells the windows as the last call left them (its own request spent nothing).
    for (const name of RATE_HEADERS) {
      const value = res.headers[name];
      if (typeof value === 'string') reply.header(name, value);
    }
    return { status: res.statusCode, body: res.json(), header: (name) => res.headers[name] as string | undefined };
  };
}

/**
 * POST /mcp: MCP's Streamable HTTP transport, stateless (no sessions; every answer JSON, never a
 * stream). The request is authenticated with the API's tokens (a 401 like /api's) but is no call
 * itself (`uncounted`: initialize and tools/list spend nothing); each tool call in it is one call
 * of its endpoint. The body is read as every body here is (JSON, 1 MiB, nesting bounded). GET and
 * DELETE /mcp are 405 (no server-sent stream, no session to end), as the transport allows.
 */
export async function mcpRoutes(app: FastifyInstance): Promise<void> {
  // Not in the OpenAPI document: JSON-RPC, described by MCP itself and listed by tools/list.
  app.post(MCP_PATH, { config: { bearer: true, uncounted: true }, schema: { hide: true } }, async (request, reply) => {
    const messages = request.body;
    if (Array.isArray(messages) && messages.length > MCP_MAX_BATCH) throw new ValidationError('body', `at most ${MCP_MAX_BATCH} JSON-RPC messages in a batch, not ${messages.length}`);
    const server = mcpServer(callThroughApi(app, request, reply));
    const transport = new WebStandardStreamableHTTPServerTransport({ sessionIdGenerator: undefined, enableJsonResponse: true });
    await server.connect(transport);
    const answer = await transport.handleRequest(webRequestOf(request), { parsedBody: messages });
    reply.code(answer.status);
    answer.headers.forEach((value, name) => void reply.header(name, value));
    const text = await answer.text();
    return reply.send(text === '' ? undefined : text);
  });
}
