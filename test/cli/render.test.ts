import assert from 'node:assert/strict';
import { test } from 'node:test';
import { itemLine, render, TOUCHES } from '../../src/cli/render.js';

test('render: objects as key/value lines, flat lists of objects as tables, deeper ones as blocks', () => {
  assert.equal(
    render({ ip: '192.0.2.1', hostname: null, tags: ['a', 'b'], progress: { done: 3, total: 5 }, asn: { number: 64500, network: '192.0.2.0/24' } }),
    ['ip        192.0.2.1', 'hostname  -', 'tags      a, b', 'progress  3/5', 'asn:', '  number   64500', '  network  192.0.2.0/24'].join('\n'),
  );
  // A column empty in every row is left out.
  assert.equal(render([{ a: 1, b: null, c: 'x' }, { a: 22, b: null, c: 'yy' }]), ['a   c', '1   x', '22  yy'].join('\n'));
  assert.equal(render([{ ip: '192.0.2.1', asn: { number: 1 } }, { ip: '192.0.2.2', asn: { number: 2 } }]), 'ip  192.0.2.1\nasn:\n  number  1\n\nip  192.0.2.2\nasn:\n  number  2');
  assert.equal(render([]), '(none)');
  assert.equal(render('a,b\n1,2\n'), 'a,b\n1,2\n');
});

test('render: a port scan shows port, state, service and time, and counts the closed ports past ten', () => {
  const item = (port: number, state: string) => ({ host: 'h', ip: '192.0.2.1', port, open: state === 'open', state, service: port === 22 ? 'ssh' : null, response_time: 1.5 });
  const touch = TOUCHES['/port/scan-range'];
  const scan = [item(22, 'open'), ...Array.from({ length: 11 }, (_, i) => item(100 + i, 'closed')), item(443, 'filtered')];
  assert.equal(render(scan, touch), ['port  state     service  response_time', '22    open      ssh      1.5', '443   filtered  -        1.5', 'Not shown: 11 closed ports'].join('\n'));
  // Ten rows or fewer: all of them.
  assert.equal(render(scan.slice(0, 3), touch).split('\n').length, 4);
  assert.equal(itemLine(scan[0], touch), 'port=22 state=open service=ssh response_time=1.5');
  assert.equal(itemLine(scan[1], touch), null);
});

test('a port scan of a name that does not resolve: one line, not a row per port, and no item printed as it completes', () => {
  const items = Array.from({ length: 1000 }, (_, i) => ({ host: 'nx.test', ip: null, port: i + 1, open: false, state: 'unresolved', service: null, response_time: null, error: 'NXDOMAIN' }));
  assert.equal(render(items, TOUCHES['/port/scan-range']), 'nx.test did not resolve (NXDOMAIN): none of the 1000 ports was scanned');
  assert.equal(itemLine(items[0], TOUCHES['/port/scan-range']), null);
});
