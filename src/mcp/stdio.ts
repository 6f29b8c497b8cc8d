import { StdioServerTransport } from '@modelcontextprotocol/sdk/server/stdio.js';
import { createClient, NetdiagConnectionError, NetdiagError } from '../../clients/typescript/src/index.js';
import { UsageError } from '../errors.js';
import { BODY_LIMIT_BYTES } from '../http/limits.js';
import { mcpServer, type CallEndpoint } from './tools.js';

export const MCP_USAGE = `netdiag mcp: the API's tools as an MCP server on stdin/stdout, for desktop agents.
Each tool call is a call of a netdiag server: NETDIAG_URL (e.g. http://localhost:8080) and
NETDIAG_TOKEN (an API token, nd_...) say which and as whom. Nothing but MCP is written to stdout.`;

interface Io {
  env: Record<string, string | undefined>;
  stdout: (text: string) => void;
  stderr: (text: string) => void;
}

/**
 * Tool calls as requests of the server, through the TypeScript client: its answers, errors
 * included, become tool results as the HTTP server's own do; a server that cannot be reached is
 * a tool error saying so (status 0), so the agent can tell its user.
 */
function callThroughClient(baseUrl: string, token: string): CallEndpoint {
  const client = createClient({ baseUrl, token });
  return async ({ path }, body, signal) => {
    try {
      const { data, message, response } = await client.request('POST', path, { body, signal });
      return { status: response.status, body: { success: true, data, message }, header: (name) => response.headers.get(name) };
    } catch (err) {
      if (err instanceof NetdiagError) {
        return { status: err.status, body: { success: false, error: err.code, message: err.message, details: err.details }, header: (name) => err.headers.get(name) };
      }
      if (err instanceof NetdiagConnectionError) {
        return { status: 0, body: { success: false, error: 'unreachable', message: `the netdiag server at ${baseUrl} could not be reached: ${err.message}` }, header: () => undefined };
      }
      throw err;
    }
  };
}

/** `netdiag mcp`: serves until stdin ends; a missing NETDIAG_URL or NETDIAG_TOKEN is a usage error before anything is read. */
export async function runMcp(argv: string[], io: Io): Promise<number> {
  if (argv.includes('--help') || argv.includes('-h')) {
    io.stdout(MCP_USAGE + '\n');
    return 0;
  }
  if (argv.length > 0) throw new UsageError(`netdiag mcp takes no arguments, not "${argv[0]}"`, MCP_USAGE);
  const url = io.env.NETDIAG_URL;
  const token = io.env.NETDIAG_TOKEN;
  if (!url) throw new UsageError('no server: set NETDIAG_URL (e.g. http://localhost:8080)', MCP_USAGE);
  if (!token) throw new UsageError('no token: set NETDIAG_TOKEN (netdiag token create on the server makes one)', MCP_USAGE);
  const call = callThroughClient(url, token);
  const server = mcpServer(() => call);
  // A line on stdin longer than the API takes as a body is refused, not buffered.
  const transport = new StdioServerTransport(process.stdin, process.stdout, { maxBufferSize: 2 * BODY_LIMIT_BYTES });
  const closed = new Promise<void>((resolve) => (server.onclose = resolve));
  await server.connect(transport);
  process.stdin.once('end', () => void server.close());
  await closed;
  return 0;
}
