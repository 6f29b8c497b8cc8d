import assert from 'node:assert/strict';
import { test } from 'node:test';
import { Type } from 'typebox';
import { schemaFields } from '../../src/lib/schema-fields.js';

/** The shapes the operations declare (src/operations): each read once, for every surface. */
const body = Type.Object({
  host: Type.String({ maxLength: 253, description: 'a host' }),
  ports: Type.Optional(Type.Union([Type.Array(Type.Integer({ minimum: 1, maximum: 65535 }), { maxItems: 100 }), Type.String({ examples: ['22,80'] })])),
  method: Type.Optional(Type.Union([Type.Literal('GET'), Type.Literal('HEAD')], { default: 'GET' })),
  preset: Type.Optional(Type.Unsafe<string>({ enum: ['top100', 'web'] })),
  domains: Type.Array(Type.String(), { minItems: 1, maxItems: 50 }),
  timeout: Type.Optional(Type.Integer({ minimum: 1, maximum: 30, default: 10 })),
  verbose: Type.Optional(Type.Boolean()),
});

test('schemaFields: name, required, kind, choices, the branch to type, the list and its items, in declared order', () => {
  const fields = schemaFields(body);
  assert.deepEqual(fields.map((f) => [f.name, f.required, f.kind]), [
    ['host', true, 'string'],
    ['ports', false, null],
    ['method', false, null],
    ['preset', false, null],
    ['domains', true, 'array'],
    ['timeout', false, 'integer'],
    ['verbose', false, 'boolean'],
  ]);
  const [host, ports, method, preset, domains, timeout] = fields;
  assert.equal(host!.description, 'a host');
  assert.equal(host!.schema.maxLength, 253);
  assert.equal(ports!.choices, null);
  assert.deepEqual(ports!.text?.examples, ['22,80']);
  assert.equal(ports!.list?.maxItems, 100);
  assert.equal(ports!.item?.kind, 'integer');
  assert.equal(ports!.item?.schema.maximum, 65535);
  assert.deepEqual(method!.choices, ['GET', 'HEAD']);
  assert.equal(method!.default, 'GET');
  assert.equal(method!.text, null);
  assert.deepEqual(preset!.choices, ['top100', 'web']);
  assert.equal(domains!.list, domains!.schema);
  assert.equal(domains!.item?.kind, 'string');
  assert.equal(timeout!.default, 10);
  assert.equal(timeout!.list, null);
});

test('schemaFields: no schema, or one without properties, has no fields', () => {
  assert.deepEqual(schemaFields(undefined), []);
  assert.deepEqual(schemaFields(Type.Object({})), []);
});
