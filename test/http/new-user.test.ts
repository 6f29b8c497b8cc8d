import assert from 'node:assert/strict';
import { test } from 'node:test';
import { build } from '../helpers/build.js';
import { assertMatchesOpenApi } from '../helpers/oas.js';

/** Issue 16, "What a new user trips over": each test here failed before its fix. */

interface Err {
  success: false;
  error: string;
  message: string;
}

test('the Authorization scheme word is case-insensitive and may be followed by several spaces (RFC 9110)', async (t) => {
  const { api, token } = await build(t);
  for (const value of [`bearer ${token}`, `BEARER ${token}`, `bEaReR ${token}`, `Bearer   ${token}`]) {
    const res = await api('/api/user', { headers: { authorization: value }, token: null });
    assert.equal(res.status, 200, value);
  }
  for (const value of [`Bearer\t${token}`, `Basic ${token}`, `bearer${token}`, `bearer ${token} x`]) {
    const res = await api('/api/user', { headers: { authorization: value }, token: null });
    assert.equal(res.status, 401, value);
  }
});
