import dgram from 'node:dgram';
import net from 'node:net';
import type { DecodedPacket } from 'dns-packet';
import { decodeBounded } from './decode.js';
import { DNS_MAX_TCP_MESSAGE_BYTES } from './defaults.js';
import type { DnsServer } from '../../domain/dns/client.js';
import { DnsTransportError, NameBudgetError } from '../../errors.js';

/**
 * Errors that say the server could not be reached at all (ICMP port or host unreachable on a
 * connected UDP socket, a refused or unroutable TCP connect): they become UNREACHABLE.
 */
const UNREACHABLE_CODES = new Set(['ECONNREFUSED', 'EHOSTUNREACH', 'ENETUNREACH', 'EHOSTDOWN', 'ENETDOWN', 'EADDRNOTAVAIL']);

/** A socket error of an exchange with `server`: unreachable when its code says so. */
function socketError(server: DnsServer, transport: 'UDP' | 'TCP', err: NodeJS.ErrnoException): DnsTransportError {
  const code = err.code ?? err.message;
  const reason = err.code !== undefined && UNREACHABLE_CODES.has(err.code) ? 'unreachable' : 'network';
  return new DnsTransportError(reason, `${formatServer(server)} over ${transport}: ${code}${reason === 'unreachable' ? ' (unreachable)' : ''}`);
}

export interface Expected {
  id: number;
  name: string;
  type: string;
}

/** The header's RCODE: dns-packet decodes it but its types do not declare it. */
export function rcodeOf(packet: DecodedPacket): string {
  const rcode = (packet as DecodedPacket & { rcode?: unknown }).rcode;
  return typeof rcode === 'string' ? rcode : 'NOERROR';
}

/**
 * Is this the answer to our question? Anything else (another id, another question, a query) is
 * someone else's packet or a spoofing attempt and is ignored. Error answers may omit the question
 * section (RFC 6891 FORMERR, some REFUSED), so an empty one is accepted only with an error RCODE.
 */
export function isAnswerTo(packet: DecodedPacket, expected: Expected): boolean {
  if (packet.type !== 'response' || packet.id !== expected.id) return false;
  const questions = packet.questions ?? [];
  if (questions.length === 0) return rcodeOf(packet) !== 'NOERROR';
  const q = questions[0]!;
  return questions.length === 1 && q.type === expected.type && q.name.toLowerCase() === expected.name.toLowerCase();
}

/** The message, or why it cannot be read (malformed, or past the name budget). */
function decode(buf: Buffer): DecodedPacket | Error {
  try {
    return decodeBounded(buf);
  } catch (err) {
    return err instanceof Error ? err : new Error(String(err));
  }
}

/**
 * One query over UDP. The socket is connected, so the kernel drops datagrams from any other
 * address; packets that still do not match are ignored until the deadline.
 */
export function exchangeUdp(server: DnsServer, message: Buffer, expected: Expected, timeoutMs: number): Promise<DecodedPacket> {
  return new Promise((resolve, reject) => {
    const socket = dgram.createSocket(net.isIPv6(server.host) ? 'udp6' : 'udp4');
    let settled = false;
    const finish = (err: Error | null, packet?: DecodedPacket): void => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      socket.close();
      if (err) reject(err);
      else resolve(packet!);
    };
    const timer = setTimeout(
      () => finish(new DnsTransportError('timeout', `no answer from ${formatServer(server)} over UDP within ${timeoutMs} ms`)),
      timeoutMs,
    );
    // A connected UDP socket is told of the ICMP error an earlier datagram drew (ECONNREFUSED).
    socket.on('error', (err: NodeJS.ErrnoException) => finish(socketError(server, 'UDP', err)));
    socket.on('message', (buf) => {
      // Anyone can send a datagram: one that cannot be read is ignored like a stray one.
      const packet = decode(buf);
      if (!(packet instanceof Error) && isAnswerTo(packet, expected)) finish(null, packet);
    });
    socket.connect(server.port, server.host, () => {
      socket.send(message, (err) => {
        if (err) finish(socketError(server, 'UDP', err as NodeJS.ErrnoException));
      });
    });
  });
}

/** One query over TCP with the 2-byte length prefix (RFC 1035 4.2.2), used after a truncated UDP answer. */
export function exchangeTcp(server: DnsServer, message: Buffer, expected: Expected, timeoutMs: number): Promise<DecodedPacket> {
  return new Promise((resolve, reject) => {
    const socket = net.connect({ host: server.host, port: server.port });
    // Chunks are kept apart and joined once: concatenating on every chunk is quadratic in their number.
    const chunks: Buffer[] = [];
    let received = 0;
    let expectedLength = -1;
    let settled = false;
    const finish = (err: Error | null, packet?: DecodedPacket): void => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      socket.destroy();
      if (err) reject(err);
      else resolve(packet!);
    };
    const timer = setTimeout(
      () => finish(new DnsTransportError('timeout', `no answer from ${formatServer(server)} over TCP within ${timeoutMs} ms`)),
      timeoutMs,
    );
    socket.on('error', (err: NodeJS.ErrnoException) => finish(socketError(server, 'TCP', err)));
    socket.on('close', () => finish(new DnsTransportError('network', `${formatServer(server)} closed the TCP connection without an answer`)));
    socket.on('connect', () => socket.write(message));
    socket.on('data', (chunk: Buffer) => {
      if (settled) return;
      chunks.push(chunk);
      received += chunk.length;
      if (received > DNS_MAX_TCP_MESSAGE_BYTES + 2) {
        finish(new DnsTransportError('malformed', `${formatServer(server)} sent more than one DNS message over TCP`));
        return;
      }
      if (expectedLength < 0 && received >= 2) {
        const head = chunks.length === 1 ? chunks[0]! : Buffer.concat(chunks);
        expectedLength = head.readUInt16BE(0);
      }
      if (expectedLength < 0 || received < 2 + expectedLength) return;
      const packet = decode(Buffer.concat(chunks, received).subarray(2, 2 + expectedLength));
      // One query per connection, so the first complete message must be our answer.
      if (packet instanceof NameBudgetError) {
        finish(new DnsTransportError('malformed', `${formatServer(server)} sent a TCP answer that was refused: ${packet.message}`));
      } else if (!(packet instanceof Error) && isAnswerTo(packet, expected)) {
        finish(null, packet);
      } else {
        finish(new DnsTransportError('malformed', `${formatServer(server)} sent a TCP answer that does not match the query`));
      }
    });
  });
}

/** "ip:port", or "ip" for the standard port 53; IPv6 with a port in brackets. */
export function formatServer(server: DnsServer): string {
  if (server.port === 53) return server.host;
  return net.isIPv6(server.host) ? `[${server.host}]:${server.port}` : `${server.host}:${server.port}`;
}
