import { readFileSync } from 'node:fs';
import { promisify } from 'node:util';
import { gunzip, gunzipSync } from 'node:zlib';

const gunzipAsync = promisify(gunzip);

/** The bundled City file is shipped gzipped; operators' files usually are not. Sniff, don't trust the name. */
function isGzip(buffer: Buffer): boolean {
  return buffer.length > 18 && buffer[0] === 0x1f && buffer[1] === 0x8b;
}

const MIN_CHUNK = 64 * 1024;
const MAX_CHUNK = 1024 * 1024 * 1024;

/**
 * Inflates a .mmdb.gz on libuv's thread pool, or passes a plain .mmdb through.
 *
 * The output chunk is sized from the gzip trailer (ISIZE, the uncompressed length), so zlib
 * inflates in one thread-pool job. With the default 16 KiB chunks, every chunk needs an
 * iteration of the main thread's event loop, and the inflate would stall while the main thread parses the ASN CSV
 * instead of overlapping with it. A wrong ISIZE only costs more chunks, never wrong output.
 */
export async function inflateMmdb(raw: Buffer): Promise<Buffer> {
  if (!isGzip(raw)) return raw;
  const isize = raw.readUInt32LE(raw.length - 4);
  return gunzipAsync(raw, { chunkSize: Math.min(Math.max(isize + 1, MIN_CHUNK), MAX_CHUNK) });
}

/** Synchronous read for the lazy path (a lookup before load()). */
export function readMmdbSync(path: string): Buffer {
  const raw = readFileSync(path);
  return isGzip(raw) ? gunzipSync(raw) : raw;
}
