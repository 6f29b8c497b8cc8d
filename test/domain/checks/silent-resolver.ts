import assert from 'node:assert/strict';
import { Checker } from '../../../src/domain/checks/index.js';
import { createConnector } from '../../../src/infra/net/connector.js';

/**
 * A check over a resolver that never answers (the HTTP and the TLS check alike): with a 1 s
 * timeout it ends by its own deadline with `expectedError`, naming no address; with a long one
 * the caller's abort ends it with the abort's reason. `check` runs the check on `checker` with
 * `timeout` seconds.
 */
export async function endsDespiteSilentResolver(
  check: (checker: Checker, timeout: number, signal: AbortSignal) => Promise<{ error: string | null; ip: string | null }>,
  expectedError: string,
): Promise<void> {
  const dialer = { resolve: () => new Promise<never>(() => undefined), dial: () => assert.fail('nothing resolved, nothing to dial') };
  const c = new Checker({ dialer, connector: createConnector(dialer) });
  // The resolver never answers: only the check's own 1 s deadline can end it (expectedError says
  // so); the callers' tests give up if it does not.
  const r = await check(c, 1, new AbortController().signal);
  assert.equal(r.error, expectedError);
  assert.equal(r.ip, null);

  const ac = new AbortController();
  const pending = check(c, 30, ac.signal);
  const reason = new Error('client went away');
  setImmediate(() => ac.abort(reason));
  await assert.rejects(pending, (err) => err === reason);
}
