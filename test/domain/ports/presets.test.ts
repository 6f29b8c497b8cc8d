import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { test } from 'node:test';
import { expandPortList, PRESETS, PRESET_NAMES, serviceName, SERVICES_FILE } from '../../../src/domain/ports/index.js';

test('top100 is the list of docs/ports.md, port for port', () => {
  const fromApiMd =
    '7,9,13,21-23,25-26,37,53,79-81,88,106,110-111,113,119,135,139,143-144,179,199,389,427,443-445,465,513-515,543-544,548,554,587,631,646,873,990,993,995,1025-1029,1110,1433,1720,1723,1755,1900,2000-2001,2049,2121,2717,3000,3128,3306,3389,3986,4899,5000,5009,5051,5060,5101,5190,5357,5432,5631,5666,5800,5900,6000-6001,6646,7070,8000,8008-8009,8080-8081,8443,8888,9100,9999-10000,32768,49152-49157';
  const ports = fromApiMd.split(',').flatMap((part) => {
    const [a, b = a] = part.split('-');
    const out: number[] = [];
    for (let p = Number(a); p <= Number(b); p++) out.push(p);
    return out;
  });
  assert.equal(ports.length, 100);
  assert.deepEqual(PRESETS.top100, ports);
});

test('every preset: valid ports, ascending, no duplicates; the groups hold what their names promise', () => {
  assert.deepEqual(PRESET_NAMES, ['top100', 'web', 'mail', 'database']);
  for (const name of PRESET_NAMES) {
    const ports = PRESETS[name];
    assert.ok(ports.length > 0, name);
    assert.ok(ports.every((p) => Number.isInteger(p) && p >= 1 && p <= 65535), name);
    assert.deepEqual([...ports], [...new Set(ports)].sort((a, b) => a - b), `${name} is sorted and distinct`);
  }
  for (const p of [80, 443, 8080, 8443]) assert.ok(PRESETS.web.includes(p), `web has ${p}`);
  for (const p of [25, 465, 587, 110, 995, 143, 993]) assert.ok(PRESETS.mail.includes(p), `mail has ${p}`);
  for (const p of [1433, 1521, 3306, 5432, 6379, 11211, 9200, 27017]) assert.ok(PRESETS.database.includes(p), `database has ${p}`);
});

test('expandPortList reads ranges and single ports', () => {
  assert.deepEqual(expandPortList('1-3,7,9-9'), [1, 2, 3, 7, 9]);
});

test('service names come from the shipped IANA-derived table, not a handful', () => {
  const table = JSON.parse(readFileSync(SERVICES_FILE, 'utf8')) as Record<string, string>;
  assert.ok(Object.keys(table).length >= 200, 'a real list');
  for (const [port, name] of Object.entries(table)) assert.equal(serviceName(Number(port)), name);
  assert.equal(serviceName(22), 'ssh');
  assert.equal(serviceName(443), 'https');
  assert.equal(serviceName(5432), 'postgresql');
  assert.equal(serviceName(3389), 'ms-wbt-server');
  // Unassigned or unofficial: no guess.
  assert.equal(serviceName(3000), null);
  assert.equal(serviceName(65000), null);
});
