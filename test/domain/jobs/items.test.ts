import assert from 'node:assert/strict';
import { test } from 'node:test';
import { JOB_ITEMS_PAGE, RESULT_IS_ITEMS, allItemBatches, type JobOperation } from '../../../src/domain/jobs/service.js';
import { JobViews } from '../../../src/domain/jobs/views.js';
import { rowView } from '../../../src/domain/webhooks/delivery.js';
import { sqliteStoreWithAccount } from '../../infra/store/backends.js';
import { ItemBatcher, RESULT_PIECE_ITEMS, RESULT_READ_BATCHES, SharedBatches, batchOf, itemLine, itemOrder, itemsOf, ndjsonAfter, resultItemsRead, resultPiecesOf, resultPiecesRead, resultTextOf, sseAfter, ssePiecesAfter } from '../../../src/domain/jobs/items.js';

/** Items 1-5 completed out of input order, written in two batches (1-3, 4-5). */
const ITEMS = [
  { seq: 1, index: 4, item: '{"p":5}' },
  { seq: 2, index: 0, item: '{"p":1}' },
  { seq: 3, index: 2, item: '"three"' },
  { seq: 4, index: 1, item: '[2]' },
  { seq: 5, index: 3, item: 'null' },
];
const BATCHES = [batchOf(ITEMS.slice(0, 3)), batchOf(ITEMS.slice(3))];
const line = (i: (typeof ITEMS)[number]) => `{"seq":${i.seq},"index":${i.index},"item":${i.item}}`;

test('a batch is the NDJSON lines of its items, seqs first..last', () => {
  assert.deepEqual(BATCHES[0], { first_seq: 1, last_seq: 3, lines: ITEMS.slice(0, 3).map((i) => `${line(i)}\n`).join('') });
  assert.throws(() => batchOf([ITEMS[0]!, ITEMS[2]!]), /consecutive/);
  assert.throws(() => batchOf([]), /at least one/);
});

test('NDJSON and SSE after any seq: whole batches as stored, a straddled batch from the next item on', () => {
  for (let after = 0; after <= 5; after++) {
    const rest = ITEMS.filter((i) => i.seq > after);
    const batches = BATCHES.filter((b) => b.last_seq > after);
    assert.equal(ndjsonAfter(batches, after), rest.map((i) => `${line(i)}\n`).join(''), `ndjson after ${after}`);
    assert.equal(sseAfter(batches, after), rest.map((i) => `id: ${i.seq}\nevent: item\ndata: ${line(i)}\n\n`).join(''), `sse after ${after}`);
    assert.deepEqual(itemsOf(batches, after), rest, `items after ${after}`);
  }
  // Every line is valid JSON, as a client parses it.
  for (const l of ndjsonAfter(BATCHES, 0).trimEnd().split('\n')) assert.deepEqual(Object.keys(JSON.parse(l) as object), ['seq', 'index', 'item']);
});

test('the result so far is the items in input order, their texts as stored', () => {
  assert.equal(resultTextOf(BATCHES), '[{"p":1},[2],"three",null,{"p":5}]');
  assert.equal(resultTextOf([]), '[]');
});

test('a long result comes in pieces of at most RESULT_PIECE_ITEMS items that join into the one array', () => {
  assert.deepEqual([...resultPiecesOf(BATCHES)], ['[{"p":1},[2],"three",null,{"p":5}]']);
  assert.deepEqual([...resultPiecesOf([])], ['[]']);
  for (const n of [RESULT_PIECE_ITEMS, 2 * RESULT_PIECE_ITEMS + 1]) {
    // Written in reverse input order, with index 7 left out (a hole, as a running job leaves).
    const values = Array.from({ length: n }, (_, i) => n - i).filter((v) => v !== 7);
    const pieces = [...resultPiecesOf([batchOf(values.map((v, i) => ({ seq: i + 1, index: v, item: String(v) })))])];
    for (const piece of pieces) assert.ok(piece.split(',').filter((s) => s !== '').length <= RESULT_PIECE_ITEMS, 'a piece holds at most RESULT_PIECE_ITEMS items');
    assert.equal(pieces.length, Math.floor(values.length / RESULT_PIECE_ITEMS) + 1);
    assert.deepEqual(JSON.parse(pieces.join('')), [...values].reverse());
  }
});

test('a finished result read a few batches at a time gives the same pieces as all the batches at once', async () => {
  const collect = async (pieces: AsyncIterable<string>) => {
    const out: string[] = [];
    for await (const piece of pieces) out.push(piece);
    return out;
  };
  const n = 2 * RESULT_PIECE_ITEMS + 37;
  // Items complete out of input order: mostly in order, every 7th one far later (a slow port), in
  // batches of 1 to 40 items.
  const order = Array.from({ length: n }, (_, i) => i).filter((i) => i % 7 !== 3);
  order.push(...Array.from({ length: n }, (_, i) => i).filter((i) => i % 7 === 3).reverse());
  const items = order.map((index, i) => ({ seq: i + 1, index, item: `{"i":${index}}` }));
  const batches: Array<ReturnType<typeof batchOf>> = [];
  for (let at = 0, size = 1; at < items.length; at += size, size = (size % 40) + 1) batches.push(batchOf(items.slice(at, at + size)));
  const reads: number[] = [];
  const read = async (afterSeq: number, limit: number) => {
    reads.push(limit);
    return batches.filter((b) => b.last_seq > afterSeq).slice(0, limit);
  };
  const pieces = await collect(resultPiecesRead(read));
  assert.equal(pieces.join(''), resultTextOf(batches));
  assert.deepEqual(JSON.parse(pieces.join('')), Array.from({ length: n }, (_, i) => ({ i })));
  for (const piece of pieces) assert.ok(piece.split(',').filter((t) => t !== '').length <= RESULT_PIECE_ITEMS, 'a piece holds at most RESULT_PIECE_ITEMS items');
  // The order read once serves any number of readers after it.
  const seqs = await itemOrder(read);
  assert.equal(seqs.length, n);
  reads.length = 0;
  assert.equal((await collect(resultPiecesRead(read, async () => seqs))).join(''), resultTextOf(batches));
  assert.ok(reads.every((limit) => limit === 1), 'with the order given, only the batches a piece needs are read');
  assert.ok(reads.every((limit) => limit <= RESULT_READ_BATCHES), 'never more than RESULT_READ_BATCHES batches in one read');
  assert.equal((await collect(resultPiecesRead(async () => []))).join(''), '[]');
  // A batch gone between the two passes (the job purged meanwhile) is an error, not a short result.
  let calls = 0;
  const vanishing = async (afterSeq: number, limit: number) => (calls++ === 0 ? batches.slice(0, limit).filter((b) => b.last_seq > afterSeq) : []);
  await assert.rejects(collect(resultPiecesRead(vanishing)), /no longer stored/);
});

test('a reader of a big result gives the event loop a turn between its pieces and its reads', async () => {
  // Each item its own batch, in reverse input order: the first pass reads many pages, the second
  // many pieces. A marker that runs once a turn must have run between two pieces, and between
  // every few reads: the reader never goes on without letting other work in.
  const n = 3 * RESULT_PIECE_ITEMS + 5;
  const batches = Array.from({ length: n }, (_, i) => batchOf([{ seq: i + 1, index: n - 1 - i, item: String(n - 1 - i) }]));
  let turns = 0;
  let reads = 0;
  let readsSinceTurn = 0;
  const read = async (afterSeq: number, limit: number) => {
    reads++;
    // Reads without a turn between them: at most a batch per item of one piece (and the first
    // pass's last page before the first), never the whole.
    assert.ok(++readsSinceTurn <= RESULT_PIECE_ITEMS + 1, 'the reader read on without a turn');
    return batches.filter((b) => b.last_seq > afterSeq).slice(0, limit);
  };
  // Runs once in every turn of the event loop (an immediate set from an immediate runs in the next).
  let done = false;
  const tick = () => {
    turns++;
    readsSinceTurn = 0;
    if (!done) setImmediate(tick);
  };
  setImmediate(tick);
  let pieces = 0;
  let turnsBefore = -1;
  try {
    for await (const texts of resultItemsRead(read)) {
      assert.ok(turns > turnsBefore, `piece ${pieces} came without a turn of the event loop since the one before`);
      turnsBefore = turns;
      assert.ok(texts.length <= RESULT_PIECE_ITEMS);
      pieces++;
    }
  } finally {
    done = true;
  }
  assert.equal(pieces, Math.ceil(n / RESULT_PIECE_ITEMS));
  // The first pass alone read n / RESULT_READ_BATCHES pages, each in its own turn.
  assert.ok(turns >= Math.floor(n / RESULT_READ_BATCHES), `${turns} turns for ${reads} reads`);
});

test('a reader whose consumer stops reads no more', async () => {
  const n = 4 * RESULT_PIECE_ITEMS;
  const batches = Array.from({ length: n / 10 }, (_, k) => batchOf(Array.from({ length: 10 }, (_, i) => ({ seq: k * 10 + i + 1, index: k * 10 + i, item: String(k * 10 + i) }))));
  let reads = 0;
  const read = async (afterSeq: number, limit: number) => (reads++, batches.filter((b) => b.last_seq > afterSeq).slice(0, limit));
  const order = await itemOrder(read);
  reads = 0;
  for await (const texts of resultItemsRead(read, async () => order)) {
    assert.equal(texts.length, RESULT_PIECE_ITEMS);
    break;
  }
  const after = reads;
  await new Promise((resolve) => setImmediate(resolve));
  assert.equal(reads, after);
  assert.ok(after <= RESULT_PIECE_ITEMS / 10 + 1, `${after} batch reads for one piece of ${RESULT_PIECE_ITEMS} items`);
});

test('readers of one finished result at once share the batches they read: each is read about once between them', async () => {
  const n = 6 * RESULT_PIECE_ITEMS;
  // Batches of 20, every 7th item late (in the last batches).
  const order = Array.from({ length: n }, (_, i) => i).filter((i) => i % 7 !== 3);
  order.push(...Array.from({ length: n }, (_, i) => i).filter((i) => i % 7 === 3));
  const items = order.map((index, i) => ({ seq: i + 1, index, item: String(index) }));
  const batches = Array.from({ length: n / 20 }, (_, k) => batchOf(items.slice(k * 20, k * 20 + 20)));
  let reads = 0;
  const read = async (afterSeq: number, limit: number) => (reads++, batches.filter((b) => b.last_seq > afterSeq).slice(0, limit));
  const seqs = await itemOrder(read);
  const alone = async (batchAt?: (seq: number) => Promise<{ first: number; texts: string[] }>) => {
    let text = '';
    for await (const piece of resultPiecesRead(read, async () => seqs, batchAt)) text += piece;
    return text;
  };
  reads = 0;
  const expected = await alone();
  const one = reads;
  reads = 0;
  const shared = new SharedBatches();
  const texts = await Promise.all(Array.from({ length: 10 }, () => alone((seq) => shared.at('job 1', seq, read))));
  for (const text of texts) assert.equal(text, expected);
  assert.ok(reads <= one + 10, `ten readers sharing read ${reads} batches; one alone reads ${one}`);
  // Another job's (or another run's) batches are never taken for these.
  await assert.rejects(shared.at('job 2', 1, async () => []), /no longer stored/);
});

test('an item text with a newline between its tokens is written on one line; a stored line that is not ours is an error, not a guess', () => {
  assert.equal(itemLine(1, 0, '{\n"a": [1,\n2]}'), '{"seq":1,"index":0,"item":{"a":[1,2]}}');
  for (const bad of ['{"seq":1,"index":x,"item":1}', '{"seq":,"index":0,"item":1}', '{"index":0,"seq":1,"item":1}', '{"seq":1,"index":0,"item":1']) {
    assert.throws(() => itemsOf([{ first_seq: 1, last_seq: 1, lines: `${bad}\n` }]), /malformed/, bad);
  }
});

test('the batcher numbers items as they are added and asks for their text only when a batch is taken', () => {
  const b = new ItemBatcher();
  assert.equal(b.take(), null);
  const asked: number[] = [];
  const text = (index: number, t: string) => () => (asked.push(index), t);
  b.add(2, text(2, '"c"'));
  b.add(0, text(0, '"a"'));
  assert.equal(b.seq, 2);
  assert.deepEqual(asked, [], 'nothing written while the items complete');
  assert.deepEqual(b.take(), { first_seq: 1, last_seq: 2, lines: '{"seq":1,"index":2,"item":"c"}\n{"seq":2,"index":0,"item":"a"}\n' });
  assert.deepEqual(asked, [2, 0]);
  b.add(1, text(1, '"b"'));
  assert.deepEqual(b.take(), { first_seq: 3, last_seq: 3, lines: '{"seq":3,"index":1,"item":"b"}\n' });
  assert.equal(b.take(), null);
});

test("a job of more batches than one read holds (a 65535-port scan's) is viewed whole: views read page after page", async (t) => {
  const { store, account } = await sqliteStoreWithAccount(t);
  // One item per batch, the most batches a job's items can make: past a page of them.
  const total = JOB_ITEMS_PAGE * 2 + 3;
  const now = Date.now();
  const at = new Date(now).toISOString();
  const id = 'job_' + 'F'.repeat(24);
  await store.jobs.create({ id, account_id: account.id, endpoint: '/x/range', body: '{}', webhook_url: null, progress_total: total, created_at: at });
  assert.ok(await store.jobs.claim(id, 'me', now, now + 60_000, at));
  // Completed last to first: item i is written in batch total - i.
  for (let seq = 1; seq <= total; seq++) {
    assert.ok(await store.jobs.addItems(id, 'me', batchOf([{ seq, index: total - seq, item: String(total - seq) }]), seq));
  }
  const batches = await allItemBatches(store.jobs, id);
  assert.deepEqual(batches.map((b) => b.first_seq), Array.from({ length: total }, (_, i) => i + 1));
  const operation: JobOperation = { items: () => total, run: async () => RESULT_IS_ITEMS };
  const views = new JobViews({ repo: store.jobs, operations: () => operation });
  const row = (await store.jobs.find(id))!;
  const all = Array.from({ length: total }, (_, i) => i);
  assert.deepEqual(JSON.parse(await views.resultText(row)), all);
  assert.deepEqual((await views.view(row)).result, all);
  // A webhook event built after the fact shows the same.
  assert.deepEqual((await rowView(store)(row)).result, all);
});

test('SSE of a stored batch in pieces of at most RESULT_PIECE_ITEMS events, together the same text as sseAfter, from any seq', () => {
  const n = 2 * RESULT_PIECE_ITEMS + 7;
  const big = batchOf(Array.from({ length: n }, (_, i) => ({ seq: i + 1, index: n - 1 - i, item: `{"port":${i + 1}}` })));
  for (const after of [0, 1, RESULT_PIECE_ITEMS, n - 1, n]) {
    const pieces = [...ssePiecesAfter(big, after)];
    assert.equal(pieces.join(''), sseAfter([big], after), `after ${after}`);
    for (const p of pieces) assert.ok(p.split('\n\n').length - 1 <= RESULT_PIECE_ITEMS, `after ${after}: a piece of at most ${RESULT_PIECE_ITEMS} events`);
    assert.equal(pieces.length, Math.ceil((n - after) / RESULT_PIECE_ITEMS));
  }
});
