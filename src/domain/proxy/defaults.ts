/**
 * Every default, bound and timeout of the proxy checker, in one place.
 * Each check has its own timeout, so one slow step yields `timeout` for that step instead of
 * holding the whole request; the worst case of one check is roughly
 * CONNECT + PROTOCOL + max(SSL, SPEED).
 */
import { DAY_MS } from '../../lib/time.js';

/** TCP connect to the proxy itself. */
export const PROXY_CONNECT_TIMEOUT_MS = 5_000;

/**
 * After the TCP connect: the proxy handshake (CONNECT / SOCKS) plus the judge's answer relayed
 * through it. The anonymity verdict is read from that same answer, so this bounds it too.
 */
export const PROXY_PROTOCOL_TIMEOUT_MS = 8_000;

/**
 * Protocol tries start one after another in order of preference; the next one starts when the
 * previous failed or after this long without an answer. A proxy that answers quickly costs
 * one connection; a slow one still has all four protocols tried in parallel after 3 × this.
 */
export const PROXY_TRY_HEAD_START_MS = 250;

/** Tunnel to NETDIAG_SSL_CHECK_TARGET plus its TLS handshake, connect included. */
export const PROXY_SSL_TIMEOUT_MS = 8_000;

/** The whole speed test (download, then upload), connects included. */
export const PROXY_SPEED_TIMEOUT_MS = 15_000;

/** The direct request to our own judge that tells us our public address. */
export const OWN_ADDRESS_TIMEOUT_MS = 5_000;

/** A learned own address is asked again after this long (dynamic public addresses change). */
export const OWN_ADDRESS_REFRESH_MS = 10 * 60_000;

/** After a failed attempt to learn our own address, the next check tries again no sooner. */
export const OWN_ADDRESS_RETRY_MS = 30_000;

/**
 * A judge nonce lives while its check runs and is revoked when the check ends; this only
 * bounds a nonce whose check somehow never finished. Longer than the worst case above.
 */
export const JUDGE_NONCE_TTL_MS = 60_000;

/** Spent nonce uses are swept from the database at most this often (per instance). */
export const JUDGE_PURGE_INTERVAL_MS = 60_000;

/**
 * A spent use stays recorded this long after its nonce expired: instances whose clocks run
 * behind still call the nonce live for a while, and must still find it spent.
 */
export const JUDGE_PURGE_GRACE_MS = 5 * 60_000;

/**
 * Revoked nonces written in one statement at most (revocations that end during a write share the
 * next one): 256 nonces × 3 uses × 3 columns stays far under SQLite's and PostgreSQL's limits on
 * bound parameters.
 */
export const JUDGE_REVOKE_BATCH_MAX = 256;

/** Random bytes of a judge secret made by the first instance when NETDIAG_JUDGE_SECRET is unset. */
export const JUDGE_SECRET_BYTES = 32;

/**
 * Bytes the judge serves for the download half of the speed test: 0.2 s at 10 Mbps, enough to
 * get past TCP slow start on a typical proxy without making a bulk of 100 move 100× a lot.
 */
export const SPEED_DOWNLOAD_BYTES = 256 * 1024;

/** Bytes sent to the judge for the upload half (under the 1 MiB body limit). */
export const SPEED_UPLOAD_BYTES = 128 * 1024;

/**
 * The shortest transfer that is timed. Its ends are performance.now() marks taken in callbacks,
 * each late by up to one iteration of the event loop (tenths of a millisecond on an idle instance, more
 * while a bulk of 100 runs), and the upload's interval also has one round trip, measured the
 * same way, taken off. Under 2 ms those errors are tens of percent and a loopback or LAN
 * proxy's interval can even come out at or below zero: such a transfer is reported as
 * TOO_FAST_TO_MEASURE rather than as a made-up figure. With the payloads above, the largest
 * figures that can be reported are about 524 Mbps up (128 KiB) and 1049 Mbps down (256 KiB).
 */
export const SPEED_MIN_TIMED_MS = 2;

/** `speed.download` / `speed.upload` when the transfer took less than SPEED_MIN_TIMED_MS. */
export const TOO_FAST_TO_MEASURE = 'too fast to measure';

/** Largest judge echo we read; a real one is a few hundred bytes. */
export const MAX_ECHO_BYTES = 64 * 1024;

/** Bytes kept of the judge's answer to the upload (`{"bytes":N}`); the rest is counted, not kept. */
export const MAX_UPLOAD_ANSWER_BYTES = 1024;

/** The judge's body limit for the upload: the payload plus room for whatever a proxy pads it with. */
export const JUDGE_UPLOAD_BODY_LIMIT = SPEED_UPLOAD_BYTES + 64 * 1024;

/** `proxies` in one bulk request (the specification's bound). */
export const PROXY_BULK_MAX = 100;

/**
 * Checks running at once in one bulk request. Equal to PROXY_BULK_MAX so 100 proxies take about
 * as long as the slowest one; sockets are bounded separately below.
 */
export const PROXY_BULK_CONCURRENCY = 100;

/**
 * Sockets one bulk request may hold at once (up to four protocol tries per proxy, then the
 * ssl and speed connections); capped again by the dialer's per-request maximum.
 */
export const PROXY_BULK_SOCKETS = 400;

/** Sockets one single check may hold at once (four parallel protocol tries). */
export const PROXY_SINGLE_SOCKETS = 4;

/** Proxy hosts resolved at once before a bulk check starts. */
export const PROXY_RESOLVE_CONCURRENCY = 20;

/** Longest proxy string accepted (host 253 + port + two 255-byte credentials + separators). */
export const MAX_PROXY_INPUT_LENGTH = 800;

/** SOCKS5 (RFC 1929) allows 1-255 bytes for each; the same bound is used for HTTP Basic. */
export const MAX_CREDENTIAL_BYTES = 255;

/** Sent to the judge; a fixed, honest User-Agent that carries no address. */
export const CHECK_USER_AGENT = 'netdiag-proxy-check/1.0';

/**
 * The `socks` package's own handshake timer, set out of the way: each check's AbortSignal bounds
 * the handshake instead, so the two never race.
 */
export const SOCKS_PACKAGE_TIMEOUT_MS = DAY_MS;
