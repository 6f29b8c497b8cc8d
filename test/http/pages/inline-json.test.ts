/** The job page's inline JSON: exactly the pretty print when it fits the bound, null when not. */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { INLINE_JSON_MAX_CHARS, inlineJson } from '../../../src/http/pages/checks.js';

const rule = (v: unknown): string | null => {
  const json = JSON.stringify(v, null, 2) ?? 'null';
  return json.length <= INLINE_JSON_MAX_CHARS ? json : null;
};

test('inlineJson gives what printing it whole and measuring would, around the bound', () => {
  const ports = Array.from({ length: 5000 }, (_, i) => ({ port: i + 1, state: i % 7 ? 'closed' : 'open', service: null, response_time: 1.25 }));
  for (const n of [0, 1, 100, 1000, 1500, 1800, 2000, 2200, 2500, 5000]) assert.equal(inlineJson(ports.slice(0, n)), rule(ports.slice(0, n)), `${n} ports`);
  for (let n = 0; n < 25_000; n += 97) {
    const v = { skipped: undefined, s: 'x'.repeat(n * 8), odd: [1, Infinity, NaN, null, true, 'é"\\\n'], o: { k: n } };
    assert.equal(inlineJson(v), rule(v), `a string of ${n * 8}`);
  }
  assert.equal(inlineJson(null), 'null');
  assert.equal(inlineJson(undefined), 'null');
  assert.equal(inlineJson(ports), null);
});
