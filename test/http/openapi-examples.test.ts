import { Ajv2020 } from 'ajv/dist/2020.js';
import addFormatsModule from 'ajv-formats';
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { ROUTE_EXAMPLES } from '../../src/http/examples.js';
import { build } from '../helpers/build.js';

// ajv-formats is CommonJS: its default export arrives as the module object under ESM.
const addFormats = ((addFormatsModule as unknown as { default?: typeof addFormatsModule }).default ?? addFormatsModule) as unknown as (ajv: Ajv2020) => void;

interface Media {
  schema?: unknown;
  example?: unknown;
  examples?: Record<string, { summary?: string; value?: unknown }>;
}
interface Operation {
  requestBody?: { content?: Record<string, Media> };
  responses: Record<string, { content?: Record<string, Media> }>;
}
type Doc = { paths: Record<string, Record<string, Operation>> };

const escape = (s: string): string => s.replace(/~/g, '~0').replace(/\//g, '~1');

/** Every example of a media object, by name. */
function examplesOf(media: Media): [string, unknown][] {
  const named = Object.entries(media.examples ?? {}).map(([name, ex]): [string, unknown] => [name, ex.value]);
  return 'example' in media ? [['example', media.example], ...named] : named;
}

test('every request body and every response of the OpenAPI document carries examples that validate against their schema', async (t) => {
  const { url } = await build(t);
  const res = await fetch(`${url}/api/openapi.json`);
  assert.equal(res.status, 200);
  const doc = (await res.json()) as Doc;

  const ajv = new Ajv2020({ strict: false, allErrors: true });
  addFormats(ajv);
  ajv.addSchema(doc, 'oas');

  const problems: string[] = [];
  let checked = 0;
  const check = (where: string, pointer: string, media: Media, mustHave: boolean): void => {
    const examples = examplesOf(media);
    if (examples.length === 0) {
      if (mustHave) problems.push(`${where}: no example`);
      return;
    }
    const validate = ajv.compile({ $ref: `oas#${pointer}/schema` });
    for (const [name, value] of examples) {
      checked++;
      if (value === undefined) problems.push(`${where} example "${name}": no value`);
      else if (!validate(value)) problems.push(`${where} example "${name}": ${ajv.errorsText(validate.errors)}`);
    }
  };

  const operations: string[] = [];
  for (const [path, methods] of Object.entries(doc.paths)) {
    for (const [method, op] of Object.entries(methods)) {
      const name = `${method.toUpperCase()} ${path}`;
      operations.push(name);
      const base = `/paths/${escape(path)}/${method}`;
      if (method === 'post') assert.ok(op.requestBody?.content, `${name} has no request body in the document`);
      for (const [type, media] of Object.entries(op.requestBody?.content ?? {})) {
        check(`${name} request ${type}`, `${base}/requestBody/content/${escape(type)}`, media, true);
      }
      assert.ok(op.responses['200'], `${name} documents no 200`);
      for (const [status, response] of Object.entries(op.responses)) {
        for (const [type, media] of Object.entries(response.content ?? {})) {
          check(`${name} ${status} ${type}`, `${base}/responses/${status}/content/${escape(type)}`, media, true);
        }
      }
    }
  }
  assert.deepEqual(problems, [], `examples missing or not matching their schema:\n${problems.join('\n')}`);
  assert.ok(operations.length >= 18, `only ${operations.length} operations documented`);
  assert.ok(checked >= operations.length * 3, `only ${checked} examples checked`);

  // The table of the routes that are no operation has no entry for a route the document no
  // longer has (a renamed route); an operation's examples are its declaration's.
  const stale = Object.keys(ROUTE_EXAMPLES).filter((key) => !operations.includes(key));
  assert.deepEqual(stale, [], 'examples for operations the document does not have');

  // Real values, not "string": what the issue asked to see in the try-it bodies.
  const text = JSON.stringify(doc);
  for (const value of ['"domain":"example.com"', '"ip":"8.8.8.8"', '"proxy":"203.0.113.7:8080:user:pass"', '2001:4860:4860::8888', '198.51.100.4:1080']) {
    assert.ok(text.includes(value), `no example shows ${value}`);
  }
});

test('the reference renders the same document, examples included', async (t) => {
  const { url } = await build(t);
  const [published, rendered] = await Promise.all([
    fetch(`${url}/api/openapi.json`).then((r) => r.json()),
    fetch(`${url}/api/docs/json`).then((r) => r.json()),
  ]);
  assert.deepEqual(rendered, published);
});
