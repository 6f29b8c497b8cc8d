import assert from 'node:assert/strict';
import { test } from 'node:test';
import { MAX_PORTS_PER_JOB, MAX_PORTS_PER_SCAN, PORT_SPEC_MAX_CHARS, normalizePorts, parsePortSpec } from '../../../src/domain/ports/index.js';

test('an nmap-style string expands to the list the array form gives: deduplicated, sorted', () => {
  assert.deepEqual(parsePortSpec('22,80,8000-8003'), [22, 80, 8000, 8001, 8002, 8003]);
  assert.deepEqual(parsePortSpec(' 443 , 80,\t22 - 23 ,80'), [22, 23, 80, 443]);
  assert.deepEqual(parsePortSpec('5-7,1-6,9'), [1, 2, 3, 4, 5, 6, 7, 9]);
  assert.equal(parsePortSpec('1-1000').length, 1000);
  assert.deepEqual(parsePortSpec('65535'), [65535]);
  assert.deepEqual(normalizePorts('80,22'), normalizePorts([80, 22]));
});

test('the bound counts ports after expansion and merging, and the message names it', () => {
  assert.equal(parsePortSpec('1-1000,1-1000,500-600').length, MAX_PORTS_PER_SCAN);
  assert.throws(() => parsePortSpec('1-2000'), /^ValidationError: ports: at most 1000 ports, "1-2000" expands to 2000; a job \(Prefer: respond-async\) takes up to 65535$/);
  assert.throws(() => parsePortSpec('1-1000,1001'), /expands to 1001;/);
  // repeated huge ranges cost nothing extra: merged before anything is listed
  const huge = Array.from({ length: 1000 }, () => '1-65535').join(',');
  assert.throws(() => parsePortSpec(huge), /expands to 65535;/);
  // A job's bound: every port, and not one more entry of the array form.
  assert.equal(parsePortSpec(huge, 'ports', MAX_PORTS_PER_JOB).length, 65535);
  assert.equal(normalizePorts('1-65535', 'ports', MAX_PORTS_PER_JOB).at(-1), 65535);
  assert.throws(() => normalizePorts(Array.from({ length: MAX_PORTS_PER_JOB + 1 }, () => 80), 'ports', MAX_PORTS_PER_JOB), /^ValidationError: ports: at most 65535 entries$/);
  assert.throws(() => normalizePorts(Array.from({ length: 1001 }, () => 80)), /^ValidationError: ports: at most 1000 entries; a job \(Prefer: respond-async\) takes up to 65535$/);
});

test('bad syntax is a 400 naming the offending entry', () => {
  const cases: Array<[string, RegExp]> = [
    ['', /^ValidationError: ports: must name at least one port/],
    ['  ', /must name at least one port/],
    ['22,,80', /"22,,80" has an empty entry between commas/],
    ['22,', /has an empty entry/],
    ['22,8o', /^ValidationError: ports: "8o" is not a port or a range like 22 or 8000-8100$/],
    ['80-', /"80-" is not a port or a range/],
    ['-80', /"-80" is not a port or a range/],
    ['1-2-3', /"1-2-3" is not a port or a range/],
    ['0', /"0": a port must be between 1 and 65535/],
    ['70000', /"70000": a port must be between 1 and 65535/],
    ['99999999999999999999999', /a port must be between 1 and 65535/],
    ['100-90', /"100-90" runs from high to low; write 90-100/],
    ['22;80', /"22;80" is not a port/],
    ['+22', /is not a port/],
    ['2e3', /is not a port/],
    ['22\n', /is not a port/],
    ['1'.repeat(PORT_SPEC_MAX_CHARS + 1), /^ValidationError: ports: at most 10000 characters$/],
  ];
  for (const [spec, message] of cases) assert.throws(() => parsePortSpec(spec), message, JSON.stringify(spec));
  // a long offending text is quoted short
  assert.throws(() => parsePortSpec(`x${'1'.repeat(500)}`), (e: Error) => e.message.length < 150);
});
