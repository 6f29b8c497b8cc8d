import net from 'node:net';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { isInitializeRequest, JSONRPCMessageSchema, JSONRPCRequestSchema, SUPPORTED_PROTOCOL_VERSIONS, type JSONRPCRequest } from '@modelcontextprotocol/sdk/types.js';
import { Exchanges } from '../../mcp/exchange.js';
import { mcpServer, type CallEndpoint } from '../../mcp/tools.js';
import { clientGoneSignal } from '../client-gone.js';
import { accountOf } from '../plugins/auth.js';
import type { CallOperation } from '../calls.js';
import { NEVER } from '../call-steps.js';
import { ForbiddenError } from '../../errors.js';

/** Where MCP's Streamable HTTP transport is served (docs/api.md, "MCP"). */
export const MCP_PATH = '/mcp';

/**
 * The most JSON-RPC messages one POST may carry. MCP dropped batches in its 2025-06-18 revision;
 * older clients may still send them. Each tool call in one is a call of its endpoint, counted
 * and limited as such; this only keeps one request from starting more work than the smallest
 * plan may do in a minute (free: 10 calls).
 */
export const MCP_MAX_BATCH = 10;

/** The rate-limit headers of a tool call's answer, carried over to the /mcp response. */
const RATE_HEADERS = ['x-ratelimit-limit', 'x-ratelimit-remaining', 'x-ratelimit-reset', 'ratelimit-policy'] as const;

/**
 * Tool calls of the /mcp request's account: each a call of its operation made inside this
 * request (src/http/calls.ts), counted, limited, validated, run and recorded as its own route's
 * request would be. A probe is abandoned when the MCP client hangs up.
 */
function callsOf(call: CallOperation, request: FastifyRequest, reply: FastifyReply): CallEndpoint {
  const account = accountOf(request);
  let gone: AbortSignal | undefined;
  return async (op, body) => {
    const answer = await call({ account, receivedAt: request.receivedAt, signal: op.probe ? (gone ??= clientGoneSignal(reply)) : NEVER, log: request.log }, op, body);
    // The /mcp response tells the windows as the last call left them (its own request spent nothing).
    for (const name of RATE_HEADERS) {
      const value = answer.headers[name];
      if (value !== undefined) reply.header(name, value);
    }
    return { status: answer.status, body: answer.body, header: (name) => answer.headers[name] };
  };
}

/** Which browser pages may call POST /mcp (their `Origin`), besides clients that send none. */
export interface McpOrigins {
  /** NETDIAG_PUBLIC_URL: its origin is this server's own. */
  publicUrl: string | undefined;
  /**
   * Other origins the operator lets call the API from a browser (`https://tools.example.com`):
   * where the CORS allow-list (NETDIAG_CORS_ORIGINS) is wired in. Compared as serialised origins.
   */
  corsOrigins: readonly string[];
}

/** The serialised origin (`scheme://host[:port]`, default port dropped, host lowercased) of `text`; null when it is none. */
function originOf(text: string): string | null {
  try {
    const origin = new URL(text).origin;
    return origin === 'null' ? null : origin;
  } catch {
    return null;
  }
}

/**
 * Whether the Host a request came to names this server for certain: an IP address or
 * `localhost` (RFC 6761), which no one else's DNS can point here. Any other name in Host may be
 * a DNS rebinding (evil.example resolved to this server's address a moment ago), whose page
 * sends `Origin: http://evil.example` to `Host: evil.example`: that pair proves nothing.
 */
function hostIsOurs(hostname: string): boolean {
  const bare = hostname.startsWith('[') && hostname.endsWith(']') ? hostname.slice(1, -1) : hostname;
  return net.isIP(bare) !== 0 || bare === 'localhost' || bare.endsWith('.localhost');
}

/**
 * MCP's Streamable HTTP transport: servers MUST validate `Origin` against DNS rebinding. No
 * Origin (a client that is no browser) passes; a browser's passes when it is this server's own
 * origin (NETDIAG_PUBLIC_URL's, or the scheme and Host it came to when that Host is an address or
 * localhost) or one of `corsOrigins`. Anything else, `Origin: null` included (a sandboxed frame,
 * a file), is a 403 `forbidden` before the body is read (after the token check, which every
 * bearer route runs first).
 */
export function checkMcpOrigin(request: FastifyRequest, origins: McpOrigins): void {
  const sent = request.headers.origin;
  if (sent === undefined) return;
  const origin = originOf(sent);
  if (origin !== null) {
    if (origins.publicUrl !== undefined && origin === originOf(origins.publicUrl)) return;
    if (origins.corsOrigins.some((allowed) => originOf(allowed) === origin)) return;
    if (hostIsOurs(request.hostname) && origin === originOf(`${request.protocol}://${request.host}`)) return;
  }
  const shown = sent.length > 100 ? `${sent.slice(0, 100)}…` : sent;
  throw new ForbiddenError(
    `POST ${MCP_PATH} refuses browser requests from the origin ${JSON.stringify(shown)}: only this server's own origin (NETDIAG_PUBLIC_URL) and the origins its operator allows may call it; an MCP client that is no browser sends no Origin header`,
  );
}

/** A JSON-RPC error that answers the HTTP request itself, as the SDK's transport words them. */
function refuse(reply: FastifyReply, status: number, code: number, message: string): FastifyReply {
  return reply.code(status).type('application/json').send(JSON.stringify({ jsonrpc: '2.0', error: { code, message }, id: null }));
}

/**
 * POST /mcp: MCP's Streamable HTTP transport, stateless (no sessions; every answer JSON, never a
 * stream). The request is authenticated with the API's tokens (a 401 like /api's) but is no call
 * itself (`uncounted`: initialize and tools/list spend nothing); each tool call in it is one call
 * of its endpoint. The body is read as every body here is (JSON, 1 MiB, nesting bounded). GET and
 * DELETE /mcp are 405 (no server-sent stream, no session to end), as the transport allows.
 */
export async function mcpRoutes(app: FastifyInstance, call: CallOperation, origins: McpOrigins): Promise<void> {
  const exchanges = new Exchanges<CallEndpoint>();
  const server = mcpServer((id) => exchanges.contextOf(id));
  await server.connect(exchanges);
  app.addHook('onClose', () => server.close());
  // Not in the OpenAPI document: JSON-RPC, described by MCP itself and listed by tools/list.
  // The Origin check is the route's own onRequest hook: it runs before the body is read, and the
  // token check (prepended to every bearer route's hooks, src/http/plugins/auth.ts) before it.
  const originCheck = async (request: FastifyRequest): Promise<void> => checkMcpOrigin(request, origins);
  app.post(MCP_PATH, { config: { bearer: true, uncounted: true }, schema: { hide: true }, onRequest: originCheck }, async (request, reply) => {
    const accept = request.headers.accept ?? '';
    if (!accept.includes('application/json') || !accept.includes('text/event-stream')) {
      return refuse(reply, 406, -32000, 'Not Acceptable: Client must accept both application/json and text/event-stream');
    }
    const version = request.headers['mcp-protocol-version'];
    if (typeof version === 'string' && !SUPPORTED_PROTOCOL_VERSIONS.includes(version)) {
      return refuse(reply, 400, -32000, `Bad Request: Unsupported protocol version: ${version} (supported versions: ${SUPPORTED_PROTOCOL_VERSIONS.join(', ')})`);
    }
    const batch = Array.isArray(request.body);
    const sent: unknown[] = batch ? (request.body as unknown[]) : [request.body];
    if (sent.length > MCP_MAX_BATCH) return refuse(reply, 400, -32600, `Invalid Request: at most ${MCP_MAX_BATCH} JSON-RPC messages in a batch, not ${sent.length}`);
    // Requests, which a stateless server answers; notifications and responses need nothing of it.
    const requests: JSONRPCRequest[] = [];
    for (const message of sent) {
      // A request is the first form JSONRPCMessageSchema tries, so this is its parse, done once.
      const request = JSONRPCRequestSchema.safeParse(message);
      if (request.success) requests.push(request.data);
      else if (!JSONRPCMessageSchema.safeParse(message).success) return refuse(reply, 400, -32700, 'Parse error: Invalid JSON-RPC message');
    }
    if (sent.length > 1 && requests.some(isInitializeRequest)) return refuse(reply, 400, -32600, 'Invalid Request: Only one initialization request is allowed');
    if (requests.length === 0) return reply.code(202).send();
    if (new Set(requests.map((r) => r.id)).size < requests.length) return refuse(reply, 400, -32600, 'Invalid Request: two requests of a batch share an id');
    const answers = await exchanges.exchange(requests, callsOf(call, request, reply));
    return reply.type('application/json').send(JSON.stringify(batch ? answers : answers[0]));
  });
}
