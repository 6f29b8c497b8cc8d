import assert from 'node:assert/strict';
import { test } from 'node:test';
import { prefersRespondAsync, webhookUrlOf } from '../../src/http/operation.js';
import { ValidationError } from '../../src/errors.js';

test('Prefer: respond-async is found in any case, among other preferences and with parameters (RFC 7240)', () => {
  for (const yes of ['respond-async', 'Respond-Async', 'return=minimal, respond-async', 'wait=10;x=1, RESPOND-ASYNC', ' respond-async ; foo=bar', 'respond-async=1']) {
    assert.equal(prefersRespondAsync(yes), true, yes);
  }
  assert.equal(prefersRespondAsync(['return=minimal', 'respond-async']), true);
  for (const no of [undefined, '', 'return=minimal', 'respond-asynchronously', 'x-respond-async', 'wait=respond-async', `${'a,'.repeat(3000)}respond-async`]) {
    assert.equal(prefersRespondAsync(no), false, String(no).slice(0, 40));
  }
});

test('webhook_url: absent, or an http(s) URL of at most 2048 characters', () => {
  assert.equal(webhookUrlOf(undefined), null);
  assert.equal(webhookUrlOf('https://hooks.example.com/x?a=1'), 'https://hooks.example.com/x?a=1');
  for (const bad of ['ftp://example.com/', 'not a url', 42, `https://example.com/${'a'.repeat(2048)}`, 'javascript:alert(1)']) {
    assert.throws(() => webhookUrlOf(bad), (err: unknown) => err instanceof ValidationError && err.details?.field === 'webhook_url', String(bad).slice(0, 40));
  }
});
