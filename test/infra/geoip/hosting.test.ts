import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { describe, test } from 'node:test';
import { HOSTING_ASNS_FILE, createHostingList, hostingList } from '../../../src/domain/ip/hosting.js';

const file = JSON.parse(readFileSync(HOSTING_ASNS_FILE, 'utf8')) as {
  comment: string;
  sources: string[];
  keywords: string[];
  asns: Array<{ asn: number; name: string; provider: string; category: string }>;
};

describe('hosting ASN list', () => {
  test('is well formed: a few hundred unique ASNs, each named, with its sources cited', () => {
    assert.ok(file.asns.length >= 200, `${file.asns.length} entries`);
    assert.equal(new Set(file.asns.map((e) => e.asn)).size, file.asns.length, 'no duplicates');
    for (const e of file.asns) {
      assert.ok(Number.isInteger(e.asn) && e.asn > 0 && e.asn < 2 ** 32, `${e.asn}`);
      assert.ok(e.name.length > 0 && e.provider.length > 0, `${e.asn} is named`);
      assert.ok(['cloud', 'hosting', 'cdn'].includes(e.category), `${e.asn} category`);
    }
    assert.ok(file.sources.length > 0 && file.comment.length > 0);
    assert.equal(hostingList().size, file.asns.length);
  });

  test('knows the big clouds and hosters by number', () => {
    const list = hostingList();
    for (const asn of [16509, 14618, 396982, 15169, 8075, 14061, 16276, 24940, 63949, 20473, 51167, 13335, 31898, 45102, 132203, 12876, 60781, 16265]) {
      const m = list.match(asn, null);
      assert.equal(m?.by, 'asn', `AS${asn}`);
    }
    assert.equal(list.match(16509, 'Amazon.com, Inc.')?.provider, 'AWS');
  });

  test('falls back to keywords in the organisation name', () => {
    const list = hostingList();
    for (const org of ['Foo Hosting Ltd', 'Bar Cloud Services', 'Example Datacenter B.V.', 'Acme Data Centre', 'Cheap VPS LLC', 'Big Dedicated Servers Inc', 'Shanghai IDC Co', 'Baz Host LLC']) {
      assert.equal(list.match(4200000001, org)?.by, 'keyword', org);
    }
    for (const org of ['Deutsche Telekom AG', 'Comcast Cable Communications, LLC', 'Observer Networks', 'Ghost Town Telecom', 'Vodafone Libertel B.V.']) {
      assert.equal(list.match(4200000001, org), null, org);
    }
    assert.equal(list.match(null, null), null);
  });

  test('a list can be built from other data (operators, tests)', () => {
    const list = createHostingList({ keywords: ['\\bmegahost\\b'], asns: [{ asn: 64500, name: 'X', provider: 'X', category: 'hosting' }] });
    assert.equal(list.match(64500, null)?.provider, 'X');
    assert.equal(list.match(64501, 'MegaHost GmbH')?.keyword, '\\bmegahost\\b');
    assert.equal(list.match(64501, 'Amazon'), null);
  });
});
