import assert from 'node:assert/strict';
import { test } from 'node:test';
import { DnsCache } from '../../../src/infra/dns/cache.js';
import type { DnsAnswer } from '../../../src/domain/dns/client.js';

function answer(name: string, ttl: number): DnsAnswer {
  return {
    name,
    type: 'A',
    status: 'NOERROR',
    records: [{ type: 'A', ttl, address: '192.0.2.1' }],
    resolver: '127.0.0.1',
    responseTimeMs: 1,
    transport: 'udp',
    cached: false,
    error: null,
    authenticated: false,
  };
}

test('least recently used entries go first beyond the bound', () => {
  const cache = new DnsCache({ maxEntries: 2, now: () => 0 });
  cache.set('a', answer('a', 60), 60);
  cache.set('b', answer('b', 60), 60);
  assert.ok(cache.get('a')); // a is now the most recent
  cache.set('c', answer('c', 60), 60);
  assert.equal(cache.size, 2);
  assert.ok(cache.get('a'));
  assert.equal(cache.get('b'), undefined);
  assert.ok(cache.get('c'));
});

test('a zero lifetime stores nothing; negative answers use the negative cap', () => {
  let now = 0;
  const cache = new DnsCache({ negativeMaxTtlS: 10, now: () => now });
  cache.set('zero', answer('zero', 0), 0);
  assert.equal(cache.size, 0);
  cache.set('neg', { ...answer('neg', 0), status: 'NXDOMAIN', records: [] }, 3600);
  now = 9_999;
  assert.ok(cache.get('neg'));
  now = 10_000;
  assert.equal(cache.get('neg'), undefined);
});

test('remaining TTLs never go below zero and keys ignore case', () => {
  let now = 0;
  const cache = new DnsCache({ now: () => now });
  const key = DnsCache.key('Example.COM', 'A', '127.0.0.1');
  assert.equal(key, DnsCache.key('example.com', 'A', '127.0.0.1'));
  cache.set(key, answer('example.com', 5), 5);
  now = 4_999;
  assert.equal(cache.get(key)?.records[0]?.ttl, 1);
});

test('maxEntries must be positive', () => {
  assert.throws(() => new DnsCache({ maxEntries: 0 }), RangeError);
});
