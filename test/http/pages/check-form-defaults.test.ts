import assert from 'node:assert/strict';
import { test } from 'node:test';
import { OPERATIONS } from '../../../src/operations/index.js';
import { bodyOf, checkToolOf } from '../../../src/http/pages/check-forms.js';

/**
 * A Checks form left as it is shown must ask what the API asks with the same fields left out:
 * the dashboard's "Follow redirects" once showed unticked beside "default true", so the
 * dashboard stopped at a 301 the API followed.
 */

interface Prop {
  type?: string;
  default?: unknown;
  description?: string;
  anyOf?: { const?: unknown }[];
}

/** What a field's words promise as its default ("default true", "(default 10)"); undefined when they promise none. */
function promised(description: string | undefined): string | undefined {
  return /(?:^|\()default ([\w.-]+)/.exec(description ?? '')?.[1];
}

test('every default a body field promises in words is declared, so the validator applies it and the form shows it', () => {
  const missing: string[] = [];
  for (const op of OPERATIONS) {
    const props = (op.body as unknown as { properties?: Record<string, Prop> }).properties ?? {};
    for (const [name, p] of Object.entries(props)) {
      const words = promised(p.description);
      if (words === undefined || /^the$/.test(words)) continue;
      if (p.type === 'boolean' || p.anyOf?.every((b) => typeof b.const === 'string')) {
        if (String(p.default) !== words) missing.push(`${op.path} ${name}: says "default ${words}", declares ${JSON.stringify(p.default)}`);
      }
    }
  }
  assert.deepEqual(missing, []);
});

test('every form submitted untouched sends a body the API reads exactly as it reads the same body with the defaults left out', () => {
  for (const op of OPERATIONS) {
    const tool = checkToolOf(op);
    const form: Record<string, string> = {};
    for (const f of tool.fields) {
      // What a browser sends for the field as shown: a ticked box sends "true" after its hidden "false".
      if (f.kind === 'checkbox') form[f.name] = f.checked ? 'true' : 'false';
      else form[f.name] = f.value;
    }
    const sent = bodyOf(tool, form);
    const props = (op.body as unknown as { properties?: Record<string, Prop> }).properties ?? {};
    for (const [name, p] of Object.entries(props)) {
      // The API's validator fills a left-out field with its declared default (useDefaults): the
      // form, left as shown, must send that value or leave the field out.
      if (p.default === undefined || !(name in sent)) continue;
      assert.deepEqual(sent[name], p.default, `${op.path} ${name}: the form sends ${JSON.stringify(sent[name])}, the API applies ${JSON.stringify(p.default)}`);
    }
  }
});

test('the HTTP check form: redirects followed and GET chosen until a person says otherwise; the method is a choice, not a text box', () => {
  const op = OPERATIONS.find((o) => o.path === '/http/check')!;
  const fields = Object.fromEntries(checkToolOf(op).fields.map((f) => [f.name, f]));
  assert.equal(fields.follow_redirects!.checked, true);
  assert.equal(fields.method!.kind, 'select');
  assert.deepEqual(fields.method!.options, ['', 'GET', 'HEAD']);
  assert.equal(fields.method!.value, 'GET');
});
