import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import https from 'node:https';
import type net from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import { createDialer } from '../../../src/infra/net/dialer.js';
import { DialerWebhookTransport } from '../../../src/infra/webhooks/sender.js';

/**
 * docs/jobs.md: an https URL whose host is an IP address is verified against that
 * address, so its certificate must name the IP. A test CA (made here with openssl, in a temp dir)
 * signs one certificate for IP:127.0.0.2 and one for DNS:localhost only; a receiver on
 * 127.0.0.2 serves each in turn.
 */

const RECEIVER_IP = '127.0.0.2';
let dir: string;
let ca: Buffer;

function openssl(...args: string[]): void {
  execFileSync('openssl', args, { cwd: dir, stdio: 'pipe' });
}

/** A key and a certificate signed by the test CA, with `san` as its subjectAltName. */
function leaf(name: string, san: string): { key: Buffer; cert: Buffer } {
  writeFileSync(join(dir, `${name}.ext`), `subjectAltName=${san}\nbasicConstraints=CA:FALSE\nkeyUsage=digitalSignature,keyEncipherment\nextendedKeyUsage=serverAuth\n`);
  openssl('req', '-new', '-newkey', 'rsa:2048', '-nodes', '-keyout', `${name}.key`, '-out', `${name}.csr`, '-subj', `/CN=${name}`);
  openssl('x509', '-req', '-in', `${name}.csr`, '-CA', 'ca.pem', '-CAkey', 'ca.key', '-CAcreateserial', '-days', '2', '-out', `${name}.pem`, '-extfile', `${name}.ext`);
  return { key: readFileSync(join(dir, `${name}.key`)), cert: readFileSync(join(dir, `${name}.pem`)) };
}

before(() => {
  dir = mkdtempSync(join(tmpdir(), 'netdiag-webhook-tls-'));
  openssl('req', '-x509', '-newkey', 'rsa:2048', '-nodes', '-keyout', 'ca.key', '-out', 'ca.pem', '-days', '2', '-subj', '/CN=netdiag test CA', '-addext', 'basicConstraints=critical,CA:TRUE', '-addext', 'keyUsage=critical,keyCertSign');
  ca = readFileSync(join(dir, 'ca.pem'));
});
after(() => rmSync(dir, { recursive: true, force: true }));

async function receiver(t: import('node:test').TestContext, creds: { key: Buffer; cert: Buffer }): Promise<{ url: string; hits: number[] }> {
  const hits: number[] = [];
  const sockets = new Set<net.Socket>();
  const server = https.createServer(creds, (req, res) => {
    req.resume();
    req.on('end', () => {
      hits.push(Date.now());
      res.writeHead(204).end();
    });
  });
  server.on('secureConnection', (s: net.Socket) => {
    sockets.add(s);
    s.on('close', () => sockets.delete(s));
  });
  await new Promise<void>((resolve) => server.listen(0, RECEIVER_IP, resolve));
  t.after(
    () =>
      new Promise<void>((resolve) => {
        for (const s of sockets) s.destroy();
        server.close(() => resolve());
      }),
  );
  return { url: `https://${RECEIVER_IP}:${(server.address() as net.AddressInfo).port}/hook`, hits };
}

function transport(): DialerWebhookTransport {
  const dialer = createDialer({ allowTargets: ['127.0.0.0/8'], dnsServers: [{ host: '127.0.0.1', port: 1 }] });
  return new DialerWebhookTransport(dialer, { ca });
}

const send = (url: string) => transport().send({ url, headers: {}, body: '{}', timeoutMs: 10_000 });

test('an https URL with an IP host accepts a certificate that names that IP', async (t) => {
  const r = await receiver(t, leaf('ip', `IP:${RECEIVER_IP}`));
  const res = await send(r.url);
  assert.equal(res.error, null);
  assert.equal(res.status, 204);
  assert.equal(r.hits.length, 1);
});

test('an https URL with an IP host refuses a certificate for DNS:localhost only', async (t) => {
  const r = await receiver(t, leaf('localhost', 'DNS:localhost'));
  const res = await send(r.url);
  assert.equal(res.status, null, 'nothing was posted');
  assert.match(res.error ?? '', /127\.0\.0\.2|altnames|ERR_TLS_CERT_ALTNAME_INVALID/);
  assert.equal(r.hits.length, 0);
});
