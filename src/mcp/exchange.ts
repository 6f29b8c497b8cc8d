import type { Transport } from '@modelcontextprotocol/sdk/shared/transport.js';
import type { JSONRPCMessage, JSONRPCRequest, RequestId } from '@modelcontextprotocol/sdk/types.js';

interface Pending<C> {
  /** The id the client gave the request. */
  id: RequestId;
  context: C;
  answer: (message: JSONRPCMessage) => void;
}

/**
 * The transport of the one MCP server that answers every POST /mcp of an app: MCP's Streamable
 * HTTP, stateless, answering JSON (never a stream). Each exchange (the requests of one HTTP
 * request) hands its requests to the server under ids of this transport's own, unique among all
 * exchanges in progress, so that callers whose JSON-RPC ids collide never receive each other's
 * answers; each request carries its exchange's context (who calls, how), which the server's
 * handlers read with `contextOf(extra.requestId)`. The server and its handling of each message
 * (dispatch, errors, initialize) are the SDK's. One server, not one per request: a server made
 * and connected per request nearly doubled the SDK's CPU per tool call (in-process, 63 µs against
 * 36 µs); the SDK's own transport per request cost several times the whole call (bench/mcp.ts).
 */
export class Exchanges<C> implements Transport {
  onmessage?: Transport['onmessage'];
  onclose?: () => void;
  onerror?: (error: Error) => void;
  #next = 0;
  readonly #pending = new Map<RequestId, Pending<C>>();

  async start(): Promise<void> {}

  async close(): Promise<void> {
    this.onclose?.();
  }

  async send(message: JSONRPCMessage): Promise<void> {
    // Only the server's answers reach here with a pending id; its notifications and requests have
    // no stream to go on (JSON answers only) and are dropped.
    if (!('id' in message) || !('result' in message || 'error' in message) || message.id === undefined) return;
    const pending = this.#pending.get(message.id);
    if (!pending) return;
    this.#pending.delete(message.id);
    pending.answer({ ...message, id: pending.id });
  }

  /** The context of the exchange a request (by the id the server saw) belongs to. */
  contextOf(id: RequestId): C {
    const pending = this.#pending.get(id);
    if (!pending) throw new Error(`no exchange holds request ${String(id)}`);
    return pending.context;
  }

  /** The server's answers to `requests` (their ids distinct), in their order, each request handled with `context`. */
  exchange(requests: readonly JSONRPCRequest[], context: C): Promise<JSONRPCMessage[]> {
    return Promise.all(
      requests.map(
        (request) =>
          new Promise<JSONRPCMessage>((answer) => {
            const id = ++this.#next;
            this.#pending.set(id, { id: request.id, context, answer });
            this.onmessage?.({ ...request, id });
          }),
      ),
    );
  }
}
