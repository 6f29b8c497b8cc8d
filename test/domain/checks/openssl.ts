/**
 * What the openssl binary says about a loopback TLS server, to compare the checks with: run
 * asynchronously (the servers under test live in the same process, so a blocking call would
 * never get its handshake).
 */
import { execFile, spawn } from 'node:child_process';
import { promisify } from 'node:util';

const run = promisify(execFile);

export interface SClient {
  protocol: string;
  cipher: string;
  verifyCode: number;
  alpn: string | null;
  /** The certificates the server sent, PEM, leaf first. */
  sent: string[];
}

export function sClient(port: number, servername: string | null, caFile: string, verifyName: string): Promise<SClient> {
  const args = ['s_client', '-connect', `127.0.0.1:${port}`, '-CAfile', caFile, '-verify_hostname', verifyName, '-showcerts', '-alpn', 'h2,http/1.1'];
  args.push(...(servername === null ? ['-noservername'] : ['-servername', servername]));
  return new Promise((resolve, reject) => {
    const child = spawn('openssl', args, { stdio: ['pipe', 'pipe', 'pipe'] });
    let out = '';
    child.stdout.on('data', (d: Buffer) => (out += d.toString()));
    child.stderr.resume();
    child.stdin.end();
    child.on('error', reject);
    child.on('close', () => {
      const session = /^New, (\S+), Cipher is (\S+)/m.exec(out);
      const verify = /Verify return code: (\d+)/.exec(out);
      if (!session || !verify) return reject(new Error(`unexpected s_client output:\n${out}`));
      const alpn = /^ALPN protocol: (\S+)/m.exec(out);
      const sent = out.match(/-----BEGIN CERTIFICATE-----[\s\S]+?-----END CERTIFICATE-----/g) ?? [];
      resolve({ protocol: session[1]!, cipher: session[2]!, verifyCode: Number(verify[1]), alpn: alpn ? alpn[1]! : null, sent: [...sent] });
    });
  });
}

export interface X509Fields {
  subject: string;
  issuer: string;
  serial: string;
  notBefore: string;
  notAfter: string;
  san: string[];
  fingerprint: string;
  keyBits: number;
  keyType: string;
}

/** `openssl x509` of a PEM certificate, names in RFC 2253, dates in ISO 8601. */
export async function x509(pem: string): Promise<X509Fields> {
  const child = run('openssl', ['x509', '-noout', '-subject', '-issuer', '-serial', '-dates', '-fingerprint', '-sha256', '-ext', 'subjectAltName', '-nameopt', 'RFC2253', '-text']);
  child.child.stdin!.end(pem);
  const { stdout } = await child;
  const field = (re: RegExp) => {
    const m = re.exec(stdout);
    if (!m) throw new Error(`${re} not in openssl x509 output:\n${stdout}`);
    return m[1]!;
  };
  const sanLine = /X509v3 Subject Alternative Name:\s*\n\s*(.+)/.exec(stdout);
  const algorithm = field(/Public Key Algorithm: (\S+)/);
  return {
    subject: field(/^subject=(.*)$/m),
    issuer: field(/^issuer=(.*)$/m),
    serial: field(/^serial=(.*)$/m),
    notBefore: new Date(field(/^notBefore=(.*)$/m)).toISOString(),
    notAfter: new Date(field(/^notAfter=(.*)$/m)).toISOString(),
    san: sanLine ? sanLine[1]!.trim().split(', ') : [],
    fingerprint: field(/^sha256 Fingerprint=(.*)$/m),
    keyBits: Number(field(/Public-Key: \((\d+) bit\)/)),
    keyType: algorithm === 'rsaEncryption' ? 'RSA' : algorithm === 'id-ecPublicKey' ? 'EC' : algorithm,
  };
}

/** OpenSSL's verify codes as Node names them (X509_V_ERR_*), for the codes the fixtures give. */
export const VERIFY_CODES: Record<number, string | null> = {
  0: null,
  10: 'CERT_HAS_EXPIRED',
  18: 'DEPTH_ZERO_SELF_SIGNED_CERT',
  20: 'UNABLE_TO_GET_ISSUER_CERT_LOCALLY',
  21: 'UNABLE_TO_VERIFY_LEAF_SIGNATURE',
  62: 'ERR_TLS_CERT_ALTNAME_INVALID',
};
