import { AsyncLocalStorage } from 'node:async_hooks';

/**
 * Whose work a dial is: the key (an account) the dialer's socket budget is shared fairly by.
 * A probe route runs its handler inside `runAsOwner`, so every dial made for it (proxy checks,
 * WHOIS referrals, IPv6 tests) is counted to its account without each domain service passing
 * the account down. A dial made outside any owner shares one anonymous owner.
 */
const storage = new AsyncLocalStorage<string>();

export function runAsOwner<T>(owner: string, fn: () => T): T {
  return storage.run(owner, fn);
}

/** The owner of the work running now, or undefined outside any. */
export function currentOwner(): string | undefined {
  return storage.getStore();
}

/**
 * The key an account's work goes by: its owner here, its slots of work in flight, and its rate
 * limiter windows (an anonymous client's windows go by its address, `ip:...`, instead).
 */
export function accountKey(id: number): string {
  return `acct:${id}`;
}

const ACCOUNT_KEY = /^acct:(\d+)$/;

/** The account id of a key made by accountKey; null for any other key. */
export function accountIdOfKey(key: string): number | null {
  const id = ACCOUNT_KEY.exec(key)?.[1];
  return id === undefined ? null : Number(id);
}
