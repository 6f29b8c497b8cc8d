import assert from 'node:assert/strict';
import { test } from 'node:test';
import { locate } from '../../../src/domain/proxy/location.js';
import type { GeoLookup } from '../../../src/domain/proxy/index.js';

test('the exit address is located through the GeoIP reader; special addresses never reach it', () => {
  const asked: string[] = [];
  const geo: GeoLookup = {
    city: (ip) => (asked.push(ip), { country: 'Germany', country_code: 'DE', region: 'Hesse', city: 'Frankfurt am Main' }),
    asn: () => ({ organization: 'Example Hosting GmbH' }),
  };
  assert.deepEqual(locate(geo, '8.8.4.4'), { country: 'Germany', country_code: 'DE', city: 'Frankfurt am Main', region: 'Hesse', isp: 'Example Hosting GmbH' });
  const nowhere = { country: null, country_code: null, city: null, region: null, isp: null };
  for (const ip of ['127.0.0.2', '10.1.2.3', '::1', 'fe80::1', null]) assert.deepEqual(locate(geo, ip), nowhere, String(ip));
  assert.deepEqual(asked, ['8.8.4.4']);
  assert.deepEqual(locate(null, '8.8.4.4'), nowhere, 'no reader, no location');
  const isp: GeoLookup = { city: () => null, asn: () => ({ organization: 'AS org', isp: 'The ISP' }) };
  assert.equal(locate(isp, '8.8.4.4').isp, 'The ISP');
});
