import type { Server, ServerResponse } from 'node:http';
import type { Socket } from 'node:net';
import type { FastifyError, FastifyHttpOptions, FastifyReply, FastifyRequest } from 'fastify';
import type { ConnectionTimeouts } from '../../config.js';
import { BadRequestError, HeadersTooLargeError, RequestTimeoutError, type AppError } from '../../errors.js';
import { sendError } from './errors.js';

/** Node's own default, named: more header bytes than this is a 431 before any of our code runs. */
export const MAX_HEADER_BYTES = 16 * 1024;
/**
 * How often Node looks for requests past their header or request timeout. Its default (30 s)
 * would let a stalled body live up to 30 s past the configured limit; a quarter second keeps the
 * limits honest at the cost of a walk over the open connections four times a second.
 */
export const CONNECTIONS_CHECK_INTERVAL_MS = 250;

/**
 * Headers every answer carries: nothing we send is to be sniffed into another type or cached.
 * Set by the observability hook on answers that go through Fastify, and here on the raw ones.
 */
export const HYGIENE_HEADERS = {
  'x-content-type-options': 'nosniff',
  'cache-control': 'no-store',
} as const;

/** A few parser errors in words a person can act on; the rest keep llhttp's own reason. */
const PARSER_REASONS: Record<string, string> = {
  HPE_INVALID_METHOD: 'the request line has no known method',
  HPE_INVALID_URL: 'the request target is malformed',
  HPE_INVALID_VERSION: 'the request line has no valid HTTP version',
  HPE_INVALID_HEADER_TOKEN: 'a header name or value contains a character HTTP does not allow',
  HPE_INVALID_CONTENT_LENGTH: 'Content-Length is not a number',
  HPE_UNEXPECTED_CONTENT_LENGTH: 'Content-Length and Transfer-Encoding: chunked are both set; send one',
  HPE_INVALID_CHUNK_SIZE: 'the chunked body has a malformed chunk size',
  HPE_INVALID_TRANSFER_ENCODING: 'Transfer-Encoding is not one the server reads',
  HPE_CR_EXPECTED: 'a line does not end with CRLF',
  HPE_LF_EXPECTED: 'a line does not end with CRLF',
};

/** What Node's HTTP parser raised, as the envelope's error. */
export function clientErrorOf(err: NodeJS.ErrnoException & { reason?: string }, timeouts: ConnectionTimeouts): AppError {
  if (err.code === 'ERR_HTTP_REQUEST_TIMEOUT') return new RequestTimeoutError(timeouts.headersMs / 1000, timeouts.requestMs / 1000);
  if (err.code === 'HPE_HEADER_OVERFLOW') return new HeadersTooLargeError(MAX_HEADER_BYTES);
  const reason = (err.code && PARSER_REASONS[err.code]) ?? err.reason ?? 'the request could not be parsed';
  return new BadRequestError(err.code?.startsWith('HPE_') ? `${reason} (${err.code})` : reason);
}

/** The envelope as raw bytes: the parser failed, so no request or reply object exists to send it. */
export function rawErrorResponse(error: AppError): string {
  const body = JSON.stringify({ success: false, error: error.code, message: error.message, ...(error.details ? { details: error.details } : {}) });
  const reason = { 400: 'Bad Request', 408: 'Request Timeout', 431: 'Request Header Fields Too Large' }[error.status] ?? 'Error';
  const headers = [
    `HTTP/1.1 ${error.status} ${reason}`,
    'content-type: application/json; charset=utf-8',
    `content-length: ${Buffer.byteLength(body)}`,
    ...Object.entries(HYGIENE_HEADERS).map(([k, v]) => `${k}: ${v}`),
    'connection: close',
  ];
  return `${headers.join('\r\n')}\r\n\r\n${body}`;
}

type ServerSocket = Socket & {
  _httpMessage?: ServerResponse | null;
  parser?: { incoming?: { complete: boolean } | null } | null;
};

/**
 * Whether the request in flight on this socket has no answer yet. An answer already on the wire
 * (headers sent, or a 401 sent at once while the body was still arriving) cannot be followed by
 * a 408 on the same connection: then the socket is only closed.
 */
function mayAnswer(socket: Socket): boolean {
  const { _httpMessage: response, parser } = socket as ServerSocket;
  if (response) return !response.headersSent;
  const incoming = parser?.incoming;
  return !incoming || incoming.complete;
}

/**
 * Fastify's server options that bound a connection in time and put what Node's parser refuses
 * into the envelope: a request's headers must arrive within `headersMs` and the whole request
 * (body included) within `requestMs`, then the 408 goes out and the connection closes. The time
 * spent answering is not counted: Node stops the request clock once the request is read, so a
 * 1000-port scan at a 30 s timeout is never cut short by these.
 */
export function connectionOptions(timeouts: ConnectionTimeouts): FastifyHttpOptions<Server> {
  return {
    requestTimeout: timeouts.requestMs,
    keepAliveTimeout: timeouts.keepAliveMs,
    http: {
      headersTimeout: timeouts.headersMs,
      requestTimeout: timeouts.requestMs,
      connectionsCheckingInterval: CONNECTIONS_CHECK_INTERVAL_MS,
      maxHeaderSize: MAX_HEADER_BYTES,
    },
    clientErrorHandler(err: Error, socket: Socket) {
      const error = err as NodeJS.ErrnoException;
      if (error.code === 'ECONNRESET' || socket.destroyed) return;
      if (socket.writable && mayAnswer(socket)) socket.write(rawErrorResponse(clientErrorOf(error, timeouts)));
      socket.destroy();
    },
    // A path whose percent-encoding does not decode is refused before routing, in the envelope.
    frameworkErrors(error: FastifyError, _request: FastifyRequest, reply: FastifyReply) {
      reply.headers(HYGIENE_HEADERS);
      return sendError(reply, new BadRequestError(error.code === 'FST_ERR_BAD_URL' ? 'the path has a malformed percent-encoding' : error.message));
    },
  };
}
