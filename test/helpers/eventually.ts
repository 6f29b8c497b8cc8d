import { setTimeout as sleep } from 'node:timers/promises';

/**
 * Waiting for something the code does on its own time (a socket closed, a job run, a webhook
 * received): poll, then go on the moment it holds. The only wait in the tests that is not about
 * time itself; a fixed sleep either wastes time or, on a loaded machine, is too short.
 */
export interface EventuallyOptions {
  /**
   * How long it may take before the test fails. Generous by default (a loaded CI machine is
   * slow); a test that asserts a bound ("closed within half a second") passes that bound.
   */
  timeoutMs?: number;
  /** Pause between two looks. */
  intervalMs?: number;
  /** What is awaited, for the failure message. */
  what?: string;
}

export const EVENTUALLY_TIMEOUT_MS = 10_000;
export const EVENTUALLY_INTERVAL_MS = 10;

/**
 * Resolves once `condition()` holds; rejects, naming `what`, if it still does not after
 * `timeoutMs`. The condition is always looked at once more at the deadline.
 */
export async function eventually(condition: () => boolean | Promise<boolean>, opts?: EventuallyOptions): Promise<void>;
/**
 * Resolves with the first value `read()` gives that `ok` accepts; rejects, naming `what` and the
 * last value read, if none did within `timeoutMs`.
 */
export async function eventually<T>(read: () => T | Promise<T>, ok: (value: T) => boolean, opts?: EventuallyOptions): Promise<T>;
export async function eventually<T>(
  read: () => T | Promise<T>,
  okOrOpts?: ((value: T) => boolean) | EventuallyOptions,
  maybeOpts: EventuallyOptions = {},
): Promise<T | void> {
  const ok = typeof okOrOpts === 'function' ? okOrOpts : (v: T) => v === true;
  const opts = typeof okOrOpts === 'function' ? maybeOpts : (okOrOpts ?? {});
  const timeoutMs = opts.timeoutMs ?? EVENTUALLY_TIMEOUT_MS;
  const intervalMs = opts.intervalMs ?? EVENTUALLY_INTERVAL_MS;
  const started = Date.now();
  for (;;) {
    const atDeadline = Date.now() - started >= timeoutMs;
    const value = await read();
    if (ok(value)) return typeof okOrOpts === 'function' ? value : undefined;
    if (atDeadline) {
      const last = typeof okOrOpts === 'function' ? `; last value: ${describe(value)}` : '';
      throw new Error(`eventually: ${opts.what ?? 'the condition'} did not hold within ${timeoutMs} ms${last}`);
    }
    await sleep(Math.min(intervalMs, Math.max(0, timeoutMs - (Date.now() - started))));
  }
}

function describe(value: unknown): string {
  try {
    const text = JSON.stringify(value) ?? String(value);
    return text.length > 300 ? `${text.slice(0, 300)}…` : text;
  } catch {
    return String(value);
  }
}
