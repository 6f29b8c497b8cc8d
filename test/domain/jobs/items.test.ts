import assert from 'node:assert/strict';
import { test } from 'node:test';
import { DNS_BULK_MAX_DOMAINS } from '../../../src/domain/dns/defaults.js';
import { IP_BULK_MAX } from '../../../src/domain/ip/defaults.js';
import { JOB_ITEMS_PAGE } from '../../../src/domain/jobs/service.js';
import { MAX_PORTS_PER_SCAN } from '../../../src/domain/ports/defaults.js';
import { PROXY_BULK_MAX } from '../../../src/domain/proxy/defaults.js';
import { ItemBatcher, batchOf, itemLine, itemsOf, ndjsonAfter, resultTextOf, sseAfter } from '../../../src/domain/jobs/items.js';

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

test("every bulk or range call's items fit in one read of a job's batches (views and streams read one page)", () => {
  for (const [name, max] of Object.entries({ MAX_PORTS_PER_SCAN, PROXY_BULK_MAX, IP_BULK_MAX, DNS_BULK_MAX_DOMAINS })) {
    assert.ok(max <= JOB_ITEMS_PAGE, `${name} (${max}) > JOB_ITEMS_PAGE (${JOB_ITEMS_PAGE})`);
  }
});
