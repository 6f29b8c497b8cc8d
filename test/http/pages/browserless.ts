import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import net from 'node:net';
import type { TestContext } from 'node:test';
import { hashPassword } from '../../../src/domain/accounts/passwords.js';
import type { Store } from '../../../src/domain/store.js';

/**
 * A browser without a browser, for the dashboard's HTTP-level tests: keeps cookies like one
 * (name=value, per client, no expiry handling beyond Max-Age=0 deleting), sends the page's
 * own Origin on posts, never follows redirects, and reads each page's CSRF token from its form.
 */
export class PageClient {
  readonly cookies = new Map<string, string>();
  /** The CSRF token of the last page fetched that had a form. */
  csrf = '';

  constructor(readonly base: string) {}

  private remember(res: Response): void {
    for (const line of res.headers.getSetCookie()) {
      const [pair, ...attrs] = line.split(';');
      const eq = pair!.indexOf('=');
      const name = pair!.slice(0, eq).trim();
      const value = pair!.slice(eq + 1).trim();
      const gone = attrs.some((a) => /^\s*max-age=0\s*$/i.test(a) || /^\s*expires=thu, 01 jan 1970/i.test(a));
      if (gone || value === '') this.cookies.delete(name);
      else this.cookies.set(name, value);
    }
  }

  private cookieHeader(): string {
    return [...this.cookies].map(([k, v]) => `${k}=${v}`).join('; ');
  }

  async get(path: string, headers: Record<string, string> = {}): Promise<Response & { html: string }> {
    const res = await fetch(this.base + path, { redirect: 'manual', headers: { cookie: this.cookieHeader(), ...headers } });
    this.remember(res);
    const html = await res.text();
    const token = /name="_csrf" value="([^"]*)"/.exec(html)?.[1];
    if (token) this.csrf = token;
    return Object.assign(res, { html });
  }

  /** A form post as a browser sends it: urlencoded, with Origin, and the page's CSRF token unless `fields._csrf` says otherwise. */
  async post(path: string, fields: Record<string, string>, headers: Record<string, string> = {}): Promise<Response & { html: string }> {
    const body = new URLSearchParams({ _csrf: this.csrf, ...fields });
    const res = await fetch(this.base + path, {
      method: 'POST',
      redirect: 'manual',
      headers: { 'content-type': 'application/x-www-form-urlencoded', origin: new URL(this.base).origin, cookie: this.cookieHeader(), ...headers },
      body,
    });
    this.remember(res);
    const html = await res.text();
    const token = /name="_csrf" value="([^"]*)"/.exec(html)?.[1];
    if (token) this.csrf = token;
    return Object.assign(res, { html });
  }

  /**
   * A form post whose answer must be a 303 to a page of this site (post/redirect/get), and the
   * page it leads to, as a browser shows it.
   */
  async submit(path: string, fields: Record<string, string>, headers: Record<string, string> = {}): Promise<Response & { html: string; posted: Response }> {
    const posted = await this.post(path, fields, headers);
    assert.equal(posted.status, 303, `POST ${path}: ${posted.status} ${posted.html.slice(0, 300)}`);
    const location = posted.headers.get('location') ?? '';
    assert.match(location, /^\/(?![/\\])/, `POST ${path} leads to a page of this site: ${location}`);
    return Object.assign(await this.get(location, headers), { posted });
  }

  /** Signs in through the login form; asserts it worked. */
  async signIn(email: string, password: string): Promise<void> {
    await this.get('/login');
    const res = await this.post('/login', { email, password });
    assert.equal(res.status, 303, `sign-in of ${email} failed: ${res.status} ${res.html.slice(0, 500)}`);
  }
}

/** Gives an existing account a password (what the set-password link does), for tests that start signed in. */
export async function setPassword(store: Store, email: string, password: string): Promise<void> {
  const account = await store.accounts.findByEmail(email);
  assert.ok(account, `no account ${email}`);
  await store.accounts.setPasswordHash(account.id, await hashPassword(password));
}

export const PASSWORD = 'correct horse battery';

/**
 * Listeners on 127.0.0.1 at ports IANA names (above 1024, so no privilege is needed): the first
 * `count` of them that are free here. Each accepts and closes; all close when the test ends.
 */
export async function namedListeners(t: TestContext, count: number): Promise<Array<{ port: number; service: string }>> {
  const names = JSON.parse(readFileSync(new URL('../../../src/domain/ports/data/services-tcp.json', import.meta.url), 'utf8')) as Record<string, string>;
  const found: Array<{ port: number; service: string }> = [];
  for (const [p, service] of Object.entries(names)) {
    const port = Number(p);
    if (port <= 1024 || found.length >= count) continue;
    const server = net.createServer((s) => s.destroy());
    const ok = await new Promise<boolean>((resolve) => {
      server.once('error', () => resolve(false));
      server.listen(port, '127.0.0.1', () => resolve(true));
    });
    if (!ok) continue;
    t.after(() => new Promise<void>((resolve) => server.close(() => resolve())));
    found.push({ port, service });
  }
  assert.equal(found.length, count, 'free named ports on 127.0.0.1');
  return found;
}
