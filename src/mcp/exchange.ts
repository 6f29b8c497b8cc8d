import type { Server } from '@modelcontextprotocol/sdk/server/index.js';
import type { Transport } from '@modelcontextprotocol/sdk/shared/transport.js';
import { isJSONRPCErrorResponse, isJSONRPCResultResponse, type JSONRPCMessage, type JSONRPCRequest, type RequestId } from '@modelcontextprotocol/sdk/types.js';

/**
 * The requests of one HTTP request, handed to an MCP server of their own, their responses
 * collected: MCP's Streamable HTTP, stateless, answering JSON (never a stream). The SDK's own
 * transport does this over web-standard Request, Response and streams, and a fresh one per HTTP
 * request cost several times the whole call it carried (bench/mcp.ts); the server and its
 * handling of each message (dispatch, errors, initialize) are still the SDK's.
 */
class OneRequestTransport implements Transport {
  onmessage?: Transport['onmessage'];
  onclose?: () => void;
  onerror?: (error: Error) => void;
  readonly #waiting = new Map<RequestId, (message: JSONRPCMessage) => void>();

  async start(): Promise<void> {}

  async close(): Promise<void> {
    this.onclose?.();
  }

  async send(message: JSONRPCMessage): Promise<void> {
    // Notifications and requests of the server have no stream to go on (JSON answers only): dropped.
    if (!isJSONRPCResultResponse(message) && !isJSONRPCErrorResponse(message)) return;
    const id = message.id;
    if (id === undefined) return;
    const done = this.#waiting.get(id);
    this.#waiting.delete(id);
    done?.(message);
  }

  answer(requests: readonly JSONRPCRequest[]): Promise<JSONRPCMessage[]> {
    return Promise.all(
      requests.map(
        (request) =>
          new Promise<JSONRPCMessage>((resolve) => {
            this.#waiting.set(request.id, resolve);
            this.onmessage?.(request);
          }),
      ),
    );
  }
}

/** The server's responses to `requests` (their ids distinct), in their order. */
export async function exchange(server: Server, requests: readonly JSONRPCRequest[]): Promise<JSONRPCMessage[]> {
  const transport = new OneRequestTransport();
  await server.connect(transport);
  return transport.answer(requests);
}
