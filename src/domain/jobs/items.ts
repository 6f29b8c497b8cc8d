import type { JobItemBatch } from './repository.js';
import { ItemTextError } from '../../errors.js';

/**
 * A job's completed items as they are stored and streamed. Items that complete together are
 * written as one batch: consecutive sequence numbers, kept as the very NDJSON lines a stream sends
 * (`{"seq":S,"index":I,"item":…}`, each ended by a newline). One row per write instead of one per
 * item (a 1000-port scan's thousand inserts cost it more than its streams and views together),
 * and a stream that is not resuming mid-batch sends what it read without touching it.
 */

/** One completed item: `seq` its completion order from 1, `index` its place in the result. */
export interface JobItemRecord {
  seq: number;
  index: number;
  /** The item as JSON text. */
  item: string;
}

const SEQ = '{"seq":';
const INDEX = ',"index":';
const ITEM = ',"item":';

/** The stream line of one item, without its newline. JSON text holds no raw newline; this makes sure of it. */
export function itemLine(seq: number, index: number, item: string): string {
  const text = item.includes('\n') ? JSON.stringify(JSON.parse(item)) : item;
  return `${SEQ}${seq}${INDEX}${index}${ITEM}${text}}`;
}

/**
 * Gathers items, completed one after another, into the next batch to write. An item's text is
 * asked for when its batch is taken, not when it is added (see JobOperation.run).
 */
export class ItemBatcher {
  #last: number;
  #pending: { index: number; text: () => string }[] = [];

  /** `lastSeq`: the seq of the last item already stored (a job run again goes on after it). */
  constructor(lastSeq = 0) {
    this.#last = lastSeq;
  }

  /** The sequence number of the last item added (0 before the first). */
  get seq(): number {
    return this.#last;
  }

  /** Adds the next item (its seq is the next number). */
  add(index: number, text: () => string): void {
    this.#last++;
    this.#pending.push({ index, text });
  }

  /** The items added since the last take, as one batch; null when there are none. Throws ItemTextError. */
  take(): JobItemBatch | null {
    const pending = this.#pending;
    if (pending.length === 0) return null;
    this.#pending = [];
    const first = this.#last - pending.length + 1;
    let lines = '';
    try {
      for (let i = 0; i < pending.length; i++) lines += `${itemLine(first + i, pending[i]!.index, pending[i]!.text())}\n`;
    } catch (err) {
      throw new ItemTextError(err);
    }
    return { first_seq: first, last_seq: this.#last, lines };
  }
}

/** A batch's lines with seq > afterSeq, each without its newline. */
function linesAfter(batch: JobItemBatch, afterSeq: number): string[] {
  const lines = batch.lines.split('\n');
  lines.pop(); // after the last newline
  return afterSeq < batch.first_seq ? lines : lines.slice(afterSeq - batch.first_seq + 1);
}

/** The NDJSON text of the items with seq > afterSeq: the stored lines as they are, unless a batch straddles afterSeq. */
export function ndjsonAfter(batches: readonly JobItemBatch[], afterSeq: number): string {
  let text = '';
  for (const b of batches) {
    if (b.last_seq <= afterSeq) continue;
    text += afterSeq < b.first_seq ? b.lines : linesAfter(b, afterSeq).map((l) => `${l}\n`).join('');
  }
  return text;
}

/** The items with seq > afterSeq as Server-Sent Events (`id` = seq, `event: item`). */
export function sseAfter(batches: readonly JobItemBatch[], afterSeq: number): string {
  let text = '';
  for (const b of batches) {
    if (b.last_seq <= afterSeq) continue;
    const first = Math.max(b.first_seq, afterSeq + 1);
    linesAfter(b, afterSeq).forEach((line, i) => (text += `id: ${first + i}\nevent: item\ndata: ${line}\n\n`));
  }
  return text;
}

/**
 * sseAfter's text of one batch in pieces of RESULT_PIECE_ITEMS events (~60 KB of a port scan's),
 * each young garbage once written: a batch's events as one string (~270 KB) stayed in V8's
 * large-object space until a full collection, for every stream (big-reads bench, BENCHMARKS.md).
 */
export function* ssePiecesAfter(batch: JobItemBatch, afterSeq: number): Generator<string> {
  if (batch.last_seq <= afterSeq) return;
  const first = Math.max(batch.first_seq, afterSeq + 1);
  const lines = linesAfter(batch, afterSeq);
  for (let at = 0; at < lines.length; at += RESULT_PIECE_ITEMS) {
    let text = '';
    for (let i = at; i < Math.min(lines.length, at + RESULT_PIECE_ITEMS); i++) text += `id: ${first + i}\nevent: item\ndata: ${lines[i]}\n\n`;
    yield text;
  }
}

/** Digits a stored seq or index may have: any more would not be an exact number. */
const MAX_DIGITS = 15;

/** Reads the unsigned integer of `line` at `from` up to `end`; NaN when it is not one. */
function uintAt(line: string, from: number, end: number): number {
  if (end <= from || end - from > MAX_DIGITS) return NaN;
  let n = 0;
  for (let i = from; i < end; i++) {
    const d = line.charCodeAt(i) - 48;
    if (d < 0 || d > 9) return NaN;
    n = n * 10 + d;
  }
  return n;
}

/** One stored line back into its item; a line this module did not write is an error, not a guess. */
function parseLine(line: string): JobItemRecord {
  const indexAt = line.indexOf(INDEX, SEQ.length);
  const itemAt = indexAt < 0 ? -1 : line.indexOf(ITEM, indexAt + INDEX.length);
  const seq = uintAt(line, SEQ.length, indexAt);
  const index = itemAt < 0 ? NaN : uintAt(line, indexAt + INDEX.length, itemAt);
  if (!line.startsWith(SEQ) || !line.endsWith('}') || Number.isNaN(seq) || Number.isNaN(index)) {
    throw new Error(`a stored job item line is malformed: ${JSON.stringify(line.slice(0, 80))}`);
  }
  return { seq, index, item: line.slice(itemAt + ITEM.length, -1) };
}

/** The items of the batches with seq > afterSeq, in seq order. */
export function itemsOf(batches: readonly JobItemBatch[], afterSeq = 0): JobItemRecord[] {
  const items: JobItemRecord[] = [];
  for (const b of batches) if (b.last_seq > afterSeq) for (const line of linesAfter(b, afterSeq)) items.push(parseLine(line));
  return items;
}

/**
 * A set of item indexes as a bitmap: a job's items already stored (a full-range scan's 65535 in
 * 8 KB), which a job run again skips. Grows as indexes are added.
 */
export class ItemIndexSet {
  #bits: Uint8Array;
  #size = 0;

  constructor(capacity = 0) {
    this.#bits = new Uint8Array(Math.ceil(Math.max(capacity, 1) / 8));
  }

  get size(): number {
    return this.#size;
  }

  has(index: number): boolean {
    const byte = index >>> 3;
    return byte < this.#bits.length && (this.#bits[byte]! & (1 << (index & 7))) !== 0;
  }

  add(index: number): void {
    const byte = index >>> 3;
    if (byte >= this.#bits.length) {
      const grown = new Uint8Array(Math.max(byte + 1, this.#bits.length * 2));
      grown.set(this.#bits);
      this.#bits = grown;
    }
    const bit = 1 << (index & 7);
    if ((this.#bits[byte]! & bit) !== 0) return;
    this.#bits[byte]! |= bit;
    this.#size++;
  }

  /** Every index of `other` added to this one. */
  addAll(other: ItemIndexSet): void {
    other.forEach((i) => this.add(i));
  }

  forEach(each: (index: number) => void): void {
    this.#bits.forEach((b, byte) => {
      for (let bit = 0; b !== 0 && bit < 8; bit++) if ((b & (1 << bit)) !== 0) each(byte * 8 + bit);
    });
  }
}

/**
 * Adds the index of every item of `batch` to `into`, read from its lines' `"index":` without
 * parsing the items (a full-range scan's 13 MB of them are read on a resume). Throws for a line
 * this module did not write.
 */
export function addIndexesOf(batch: JobItemBatch, into: ItemIndexSet): void {
  eachIndex(batch, (_seq, index) => into.add(index));
}

/**
 * Items of a result written in one piece (resultPiecesOf, resultItemsRead): some 50 KB of a port
 * scan's. Under V8's large-object size (128 KB), so a piece written and dropped is young garbage,
 * freed at the next scavenge; pieces of 200 KB lived until a full collection, and ten readers of a
 * full-range scan grew the server by a hundred MB and more with them.
 */
export const RESULT_PIECE_ITEMS = 250;

/**
 * The items in input order as a JSON array, their texts as stored (not parsed and written again):
 * a running bulk or range call's result so far, and a succeeded one's whole result when that is
 * exactly its items (JobService.run keeps no second copy of it then).
 */
export function resultTextOf(batches: readonly JobItemBatch[]): string {
  return [...resultPiecesOf(batches)].join('');
}

/**
 * resultTextOf's text in pieces of at most RESULT_PIECE_ITEMS items, for a stream to write one
 * after the other: a full-range scan's result is 13 MB, which as one string (and one buffer on
 * its way to the socket) held some 26 MB more at the end of the job's stream.
 */
export function* resultPiecesOf(batches: readonly JobItemBatch[]): Generator<string> {
  // Placed by index, not sorted: no record per item kept (65535 of them for a full-range scan).
  const texts: string[] = [];
  for (const b of batches) for (const line of linesAfter(b, 0)) {
    const { index, item } = parseLine(line);
    texts[index] = item;
  }
  const pieces = new Pieces();
  // A running job's items so far leave holes, which are skipped.
  for (const text of texts) {
    if (text === undefined) continue;
    const piece = pieces.add(text);
    if (piece !== null) yield piece;
  }
  yield pieces.end();
}

/** Batches a reader of a finished result holds at once (resultItemsRead, batchesRead). */
export const RESULT_READ_BATCHES = 8;

/**
 * The batches with items after `afterSeq`, RESULT_READ_BATCHES a read (`read`: JobRepository.
 * itemBatches of the job), each page yielded in an iteration of the event loop of its own: a reader of a
 * 65535-port result (13 MB) never holds it whole, nor the loop for longer than a page takes.
 */
export async function* batchesRead(read: (afterSeq: number, limit: number) => Promise<JobItemBatch[]>, afterSeq = 0): AsyncGenerator<JobItemBatch[]> {
  for (let after = afterSeq; ; ) {
    const page = await read(after, RESULT_READ_BATCHES);
    if (page.length > 0) yield page;
    if (page.length < RESULT_READ_BATCHES) return;
    after = page[page.length - 1]!.last_seq;
    await nextLoopIteration();
  }
}

/**
 * Lets whatever else waits on the event loop run (I/O first). The store's reads may not yield at
 * all (better-sqlite3 answers synchronously), so a reader of a big result that only awaited them
 * would hold every other request until it had read the whole.
 */
export function nextLoopIteration(): Promise<void> {
  return new Promise((resolve) => setImmediate(resolve));
}

/** Calls `each(seq, index)` for every line of the batch, its index read in place (the item is neither parsed nor copied). */
function eachIndex(batch: JobItemBatch, each: (seq: number, index: number) => void): void {
  const text = batch.lines;
  let seq = batch.first_seq;
  for (let start = 0; start < text.length; seq++) {
    const end = text.indexOf('\n', start);
    const lineEnd = end < 0 ? text.length : end;
    const indexAt = text.indexOf(INDEX, start);
    const itemAt = indexAt < 0 || indexAt > lineEnd ? -1 : text.indexOf(ITEM, indexAt + INDEX.length);
    const index = itemAt < 0 || itemAt > lineEnd ? NaN : uintAt(text, indexAt + INDEX.length, itemAt);
    if (!text.startsWith(SEQ, start) || Number.isNaN(index)) {
      throw new Error(`a stored job item line is malformed: ${JSON.stringify(text.slice(start, Math.min(lineEnd, start + 80)))}`);
    }
    each(seq, index);
    start = lineEnd + 1;
  }
}

/**
 * The seq of the item at each index of a job's result (0 where none is stored yet), read a few
 * batches at a time, each index read in place (no item parsed or copied): the order a reader of
 * the result gives the items in (resultItemsRead). A finished job's never changes (JobViews keeps
 * a few of them).
 */
export async function itemOrder(read: (afterSeq: number, limit: number) => Promise<JobItemBatch[]>): Promise<Int32Array> {
  const seqOf: number[] = [];
  for await (const page of batchesRead(read)) for (const b of page) eachIndex(b, (seq, index) => (seqOf[index] = seq));
  const order = new Int32Array(seqOf.length);
  seqOf.forEach((seq, index) => (order[index] = seq));
  return order;
}

/**
 * A job's item texts in input order, RESULT_PIECE_ITEMS at a time (the last fewer), read a few
 * batches at a time (`read`: JobRepository.itemBatches of the job) instead of all at once, in the
 * order `order` gives (itemOrder's, read first unless given; asked for when the first piece is),
 * each batch a piece needs got by `batchAt` (read on its own unless given; SharedBatches shares them): a batch is read again when a piece
 * needs one that is not among the RESULT_READ_BATCHES last read. Each read and each piece is in an
 * iteration of the event loop of its own (nextLoopIteration): ten readers of a full-range scan at once held the
 * server for seconds when each read its whole result in one go. Items complete roughly in input
 * order, so each batch is mostly read once more; what is held at once is the order and a few
 * batches.
 */
export async function* resultItemsRead(
  read: (afterSeq: number, limit: number) => Promise<JobItemBatch[]>,
  order?: () => Promise<Int32Array>,
  batchAt: (seq: number) => Promise<HeldBatch> = (seq) => readBatch(read, seq),
): AsyncGenerator<string[]> {
  const seqOf = await (order ?? (() => itemOrder(read)))();
  // The batches read last, oldest first.
  const window: HeldBatch[] = [];
  const held = (seq: number): string | undefined => {
    for (const b of window) if (seq >= b.first && seq < b.first + b.texts.length) return b.texts[seq - b.first];
    return undefined;
  };
  const readAgain = async (seq: number): Promise<string> => {
    const batch = await batchAt(seq);
    if (window.length === RESULT_READ_BATCHES) window.shift();
    window.push(batch);
    return held(seq)!;
  };
  let texts: string[] = [];
  for (const seq of seqOf) {
    // A running job's items so far leave holes, which are skipped.
    if (seq === 0) continue;
    texts.push(held(seq) ?? (await readAgain(seq)));
    if (texts.length < RESULT_PIECE_ITEMS) continue;
    yield texts;
    texts = [];
    await nextLoopIteration();
  }
  if (texts.length > 0) yield texts;
}

/** A batch as a reader holds it: its first seq and its items' texts in seq order. */
export interface HeldBatch {
  first: number;
  texts: string[];
}

/** The batch that holds item `seq`, read; an error when it is no longer stored. */
async function readBatch(read: (afterSeq: number, limit: number) => Promise<JobItemBatch[]>, seq: number): Promise<HeldBatch> {
  const [batch] = await read(seq - 1, 1);
  if (!batch || batch.first_seq > seq) throw new Error(`job item ${seq} is no longer stored`);
  return { first: batch.first_seq, texts: linesAfter(batch, 0).map((line) => parseLine(line).item) };
}

/** Batches SharedBatches holds at once, of all jobs together: some 7 MB of a full-range scan's. */
export const SHARED_BATCHES = 32;

/**
 * The batches of finished jobs read last, shared by every reader of them: ten readers of one
 * full-range result at once, going at about the same pace, read each batch once between them
 * instead of ten times (13 MB each; the text of every read stays in V8's large-object space until
 * a full collection, which grew the server by a hundred MB and more). A batch being read for one
 * reader is awaited by another that needs it. Only for finished jobs: a job run again rewrites
 * its batches under the same seqs.
 */
export class SharedBatches {
  readonly #held: Array<{ key: string; batch: HeldBatch }> = [];
  readonly #reading = new Map<string, Promise<HeldBatch>>();

  /** The batch of job `key` (its id and run) that holds `seq`: held, being read for another reader, or read now by `read`. */
  at(key: string, seq: number, read: (afterSeq: number, limit: number) => Promise<JobItemBatch[]>): Promise<HeldBatch> {
    for (const h of this.#held) if (h.key === key && seq >= h.batch.first && seq < h.batch.first + h.batch.texts.length) return Promise.resolve(h.batch);
    const reading = `${key} ${seq}`;
    const known = this.#reading.get(reading);
    if (known) return known;
    const batch = readBatch(read, seq).then((b) => {
      this.#held.push({ key, batch: b });
      if (this.#held.length > SHARED_BATCHES) this.#held.shift();
      return b;
    });
    this.#reading.set(reading, batch);
    const done = (): void => void this.#reading.delete(reading);
    batch.then(done, done);
    return batch;
  }
}

/** resultPiecesOf's text for a finished job, read as resultItemsRead reads it: a piece per RESULT_PIECE_ITEMS items, then the closing bracket. */
export async function* resultPiecesRead(
  read: (afterSeq: number, limit: number) => Promise<JobItemBatch[]>,
  order?: () => Promise<Int32Array>,
  batchAt?: (seq: number) => Promise<HeldBatch>,
): AsyncGenerator<string> {
  let opening = '[';
  for await (const texts of resultItemsRead(read, order, batchAt)) {
    yield opening + texts.join(',');
    opening = ',';
  }
  yield opening === '[' ? '[]' : ']';
}

/** Item texts, added in input order, as the pieces of one JSON array of RESULT_PIECE_ITEMS items each. */
class Pieces {
  #items: string[] = [];
  #opening = '[';

  /** Adds the next item; returns the piece it completed, if it did. */
  add(text: string): string | null {
    this.#items.push(text);
    if (this.#items.length < RESULT_PIECE_ITEMS) return null;
    const piece = this.#opening + this.#items.join(',');
    this.#opening = ',';
    this.#items = [];
    return piece;
  }

  /** The last piece, which closes the array (the whole array when no piece came before). */
  end(): string {
    return `${this.#items.length > 0 || this.#opening === '[' ? this.#opening : ''}${this.#items.join(',')}]`;
  }
}

/** The items as one batch (tests and tools that write items directly); seqs must run on without a gap. */
export function batchOf(items: readonly JobItemRecord[]): JobItemBatch {
  if (items.length === 0) throw new RangeError('batchOf: at least one item');
  items.forEach((it, i) => {
    if (it.seq !== items[0]!.seq + i) throw new RangeError('batchOf: the items\' seqs must be consecutive');
  });
  return { first_seq: items[0]!.seq, last_seq: items[items.length - 1]!.seq, lines: items.map((i) => `${itemLine(i.seq, i.index, i.item)}\n`).join('') };
}
