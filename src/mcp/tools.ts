import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { Server } from '@modelcontextprotocol/sdk/server/index.js';
import { AjvJsonSchemaValidator } from '@modelcontextprotocol/sdk/validation/ajv';
import { CallToolRequestSchema, ErrorCode, ListToolsRequestSchema, McpError, type CallToolResult, type RequestId, type Tool } from '@modelcontextprotocol/sdk/types.js';
import { PACKAGE_DIR } from '../config.js';
import { schemaFields, type FieldSchema } from '../lib/schema-fields.js';
import { OPERATIONS, type AnyOperation } from '../operations/index.js';
import { toolNameOf } from '../operations/names.js';

/**
 * The MCP tools (docs/api.md, "MCP"): one per operation, named from its path, whose call IS a call of
 * the operation's endpoint. Both MCP servers use this module: POST /mcp (src/http/routes/mcp.ts)
 * calls the endpoint inside the app, `netdiag mcp` (stdio.ts) over HTTP through the client; each
 * hands in how to call an endpoint, and this module turns tool calls into endpoint calls and the
 * endpoint's answers into tool results.
 */

/** What an endpoint answered: its status, its parsed body (the envelope) and its headers. */
export interface EndpointAnswer {
  status: number;
  body: unknown;
  header: (name: string) => string | null | undefined;
}

/**
 * Calls the operation's endpoint (`POST /api<op.path>`) with `body`, as the caller (its token, its
 * limits). `signal` aborts when the MCP request is cancelled (stdio); a probe is also abandoned
 * when its client goes.
 */
export type CallEndpoint = (op: AnyOperation, body: Record<string, unknown>, signal: AbortSignal) => Promise<EndpointAnswer>;

/** Where the structured content of an operation whose `data` is an array puts it: MCP's structured content is an object. */
export const ITEMS_KEY = 'items';

interface Entry {
  op: AnyOperation;
  tool: Tool;
  /** `data` is an array (bulk and range calls): the structured content is `{items: data}`. */
  wrapsItems: boolean;
}

type JsonSchema = Record<string, unknown>;

/** "integer 1–30", "at most 255 characters", "one of A, AAAA": a value's bounds in words, a union's branch by branch. */
function boundsOf(schema: FieldSchema): string {
  if (Array.isArray(schema.anyOf)) return schema.anyOf.map(boundsOf).join(', or ');
  const parts: string[] = [];
  if (Array.isArray(schema.enum)) parts.push(`one of ${schema.enum.join(', ')}`);
  else if (typeof schema.type === 'string') parts.push(schema.type === 'array' ? `array of ${String(schema.items?.type ?? 'values')}s` : schema.type);
  if (typeof schema.minimum === 'number' && typeof schema.maximum === 'number') parts.push(`${schema.minimum}–${schema.maximum}`);
  if (typeof schema.maxLength === 'number') parts.push(`at most ${schema.maxLength} characters`);
  if (typeof schema.maxItems === 'number') parts.push(`${String(schema.minItems ?? 0)} to ${schema.maxItems} entries`);
  const { items } = schema;
  if (items && typeof items.minimum === 'number' && typeof items.maximum === 'number') parts.push(`each ${items.minimum}–${items.maximum}`);
  return parts.join(' ');
}

/** The summary, then every field (src/lib/schema-fields.ts reads them) with its bounds, required or default: what a model reads before it calls. */
function descriptionOf(op: AnyOperation): string {
  const fields = schemaFields(op.body).map((f) => {
    const rule = f.required ? 'required' : f.default !== undefined ? `default ${JSON.stringify(f.default)}` : 'optional';
    return `${f.name} (${boundsOf(f.schema)}; ${rule})`;
  });
  // A tool call is synchronous: the schema's array bound is a job's, the call takes `bounds.sync`.
  const bound = op.bounds ? ` At most ${op.bounds.sync} ${op.bounds.noun} in one tool call.` : '';
  return `${op.summary}. Fields: ${fields.join('; ')}.${bound} One call of POST /api${op.path}: counted against the plan's limits like any API call.`;
}

/** The output schema: the `data` schema, or `{items: data}` for an array. */
function outputSchemaOf(op: AnyOperation, wrapsItems: boolean): Tool['outputSchema'] {
  if (!wrapsItems) return op.data as unknown as Tool['outputSchema'];
  return { type: 'object', properties: { [ITEMS_KEY]: op.data as unknown as JsonSchema }, required: [ITEMS_KEY] };
}

const ENTRIES: ReadonlyMap<string, Entry> = new Map(
  OPERATIONS.map((op) => {
    const wrapsItems = (op.data as JsonSchema).type === 'array';
    const tool: Tool = {
      name: toolNameOf(op.path),
      title: op.summary,
      description: descriptionOf(op),
      // The body schema as the API validates it; `webhook_url` is no field of it: a tool call is synchronous.
      inputSchema: op.body as unknown as Tool['inputSchema'],
      outputSchema: outputSchemaOf(op, wrapsItems),
    };
    return [tool.name, { op, tool, wrapsItems }];
  }),
);

/** Every tool, in the order of OPERATIONS. */
export const TOOLS: readonly Tool[] = [...ENTRIES.values()].map((e) => e.tool);

/** The endpoint a tool calls (`dns_lookup` → `/dns/lookup`), or undefined. */
export function endpointOf(toolName: string): string | undefined {
  return ENTRIES.get(toolName)?.op.path;
}

/** What the rate-limit headers of an answer say, for a tool result's `_meta` (an MCP client sees no headers). */
function rateLimitOf(answer: EndpointAnswer): Record<string, unknown> | undefined {
  const limit = answer.header('x-ratelimit-limit');
  if (limit === null || limit === undefined) return undefined;
  const retryAfter = answer.header('retry-after');
  return {
    limit: Number(limit),
    remaining: Number(answer.header('x-ratelimit-remaining')),
    reset: Number(answer.header('x-ratelimit-reset')),
    policy: answer.header('ratelimit-policy') ?? null,
    ...(retryAfter ? { retry_after: Number(retryAfter) } : {}),
  };
}

interface Envelope {
  success?: unknown;
  data?: unknown;
  message?: unknown;
  error?: unknown;
  details?: unknown;
}

/**
 * A tool result from the endpoint's answer. A 200: `structuredContent` is the API's `data`
 * (`{items: data}` for an array), the text is the API's message and the same JSON for clients
 * that read only text. Anything else is a tool error (`isError`) whose text is the API's message;
 * the status, error code and details go in `_meta`, as do the rate-limit headers of every answer.
 */
export function toolResult(entry: Pick<Entry, 'wrapsItems'>, answer: EndpointAnswer): CallToolResult {
  const body = (answer.body !== null && typeof answer.body === 'object' ? answer.body : {}) as Envelope;
  const rateLimit = rateLimitOf(answer);
  const meta: Record<string, unknown> = rateLimit ? { 'netdiag/rate_limit': rateLimit } : {};
  const message = typeof body.message === 'string' ? body.message : `the server answered HTTP ${answer.status}`;
  if (answer.status === 200 && body.success === true) {
    const structured = (entry.wrapsItems ? { [ITEMS_KEY]: body.data } : body.data) as Record<string, unknown>;
    return { content: [{ type: 'text', text: message }, { type: 'text', text: JSON.stringify(structured) }], structuredContent: structured, _meta: meta };
  }
  meta['netdiag/error'] = { status: answer.status, error: typeof body.error === 'string' ? body.error : null, ...(body.details !== undefined ? { details: body.details } : {}) };
  return { isError: true, content: [{ type: 'text', text: message }], _meta: meta };
}

/** A tool error that is no answer of the endpoint (it could not be reached). */
export function toolError(message: string): CallToolResult {
  return { isError: true, content: [{ type: 'text', text: message }] };
}

const SERVER_INFO = {
  name: 'netdiag',
  version: (JSON.parse(readFileSync(join(PACKAGE_DIR, 'package.json'), 'utf8')) as { version: string }).version,
};

/**
 * An MCP server offering the tools; `callOf` says how a tool call is made for the request the
 * server knows by `requestId`: POST /mcp makes one server per app and serves every caller with it
 * (exchange.ts), `netdiag mcp` one per process.
 */
export function mcpServer(callOf: (requestId: RequestId) => CallEndpoint): Server {
  const server = new Server(SERVER_INFO, { capabilities: { tools: {} }, jsonSchemaValidator: new AjvJsonSchemaValidator() });
  server.setRequestHandler(ListToolsRequestSchema, () => ({ tools: TOOLS as Tool[] }));
  server.setRequestHandler(CallToolRequestSchema, async (request, extra) => {
    const entry = ENTRIES.get(request.params.name);
    // MCP: an unknown tool is a protocol error, not a tool result.
    if (!entry) throw new McpError(ErrorCode.InvalidParams, `unknown tool "${request.params.name}"; tools/list names them`);
    // The arguments as sent, defaults and all left to the endpoint: it validates and fills them in as for any call.
    return toolResult(entry, await callOf(extra.requestId)(entry.op, request.params.arguments ?? {}, extra.signal));
  });
  return server;
}
