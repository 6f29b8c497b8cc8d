import { NetdiagConnectionError, NetdiagError } from './errors.js';

/**
 * Reading what the server sends, bounded: every byte from the network is hostile until read, so
 * a body or a stream line over the client's `maxBytes` is refused instead of filling memory.
 */

/** What a body or one line of a stream may hold at most unless the client says otherwise: a full-range scan's job is a few MB. */
export const DEFAULT_MAX_BYTES = 64 * 1024 * 1024;

function tooLarge(status: number, what: string, max: number, headers?: Headers): NetdiagError {
  return new NetdiagError(status, 'response_too_large', `${what} is over ${max} bytes; refused (raise the client's maxBytes if it is expected)`, headers ? { headers } : {});
}

/** The next chunk; a connection that broke meanwhile is a NetdiagConnectionError (an abort stays an abort). */
async function read(reader: ReadableStreamDefaultReader<Uint8Array>): Promise<ReadableStreamReadResult<Uint8Array>> {
  try {
    return await reader.read();
  } catch (err) {
    if (err instanceof Error && (err.name === 'AbortError' || err.name === 'TimeoutError')) throw err;
    throw new NetdiagConnectionError(`the connection broke while the answer was read: ${err instanceof Error ? err.message : String(err)}`, { cause: err });
  }
}

/** The whole body as text, refused past `max` bytes. */
export async function readText(response: Response, max: number): Promise<string> {
  const declared = Number(response.headers.get('content-length'));
  if (declared > max) {
    await response.body?.cancel();
    throw tooLarge(response.status, 'the answer', max, response.headers);
  }
  if (!response.body) return '';
  const decoder = new TextDecoder();
  const reader = response.body.getReader();
  let text = '';
  let bytes = 0;
  for (;;) {
    const { done, value } = await read(reader);
    if (done) break;
    bytes += value.byteLength;
    if (bytes > max) {
      await reader.cancel();
      throw tooLarge(response.status, 'the answer', max, response.headers);
    }
    text += decoder.decode(value, { stream: true });
  }
  return text + decoder.decode();
}

/**
 * The lines of a body (LF, CRLF or CR ends one), each refused past `max` bytes: a line is
 * looked at once as its bytes arrive, so the time is linear in what was sent.
 */
export async function* readLines(body: ReadableStream<Uint8Array>, max: number, status: number): AsyncGenerator<string> {
  const decoder = new TextDecoder();
  const reader = body.getReader();
  let parts: string[] = [];
  let length = 0;
  // A CR that ended the last chunk: an LF that starts the next one ends no new line.
  let afterCr = false;
  try {
    for (;;) {
      const { done, value } = await read(reader);
      const text = done ? decoder.decode() : decoder.decode(value, { stream: true });
      let from = 0;
      if (afterCr && text.startsWith('\n')) from = 1;
      afterCr = false;
      // The next LF and CR at or after `from`, searched again only once passed (-1: none left).
      let lf = -2;
      let cr = -2;
      for (;;) {
        if (lf !== -1 && lf < from) lf = text.indexOf('\n', from);
        if (cr !== -1 && cr < from) cr = text.indexOf('\r', from);
        const end = cr >= 0 && (lf < 0 || cr < lf) ? cr : lf;
        const piece = text.slice(from, end < 0 ? text.length : end);
        // Characters, not bytes, once decoded: a UTF-8 byte is at most one of them.
        length += piece.length;
        if (length > max) throw tooLarge(status, 'a line of the stream', max);
        parts.push(piece);
        if (end < 0) break;
        yield parts.join('');
        parts = [];
        length = 0;
        if (end === cr && text[end + 1] === '\n') from = end + 2;
        else if (end === cr && end + 1 === text.length) {
          afterCr = true;
          from = end + 1;
        } else from = end + 1;
      }
      if (done) {
        if (length > 0) yield parts.join('');
        return;
      }
    }
  } finally {
    await reader.cancel().catch(() => undefined);
  }
}
