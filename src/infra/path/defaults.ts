/**
 * Every default and bound of the path tools' runner (docs/path-tools.md): where the programs are,
 * the fixed parts of their argument lists, their deadlines and output bounds. What a caller may
 * ask for (packets, hops, queries) is bounded in src/domain/path/defaults.ts.
 */

/** Where each program is looked for, in order (the Debian packages iputils-ping, traceroute, mtr-tiny). */
export const PING_PATHS = ['/usr/bin/ping', '/bin/ping'] as const;
export const TRACEROUTE_PATHS = ['/usr/sbin/traceroute', '/usr/bin/traceroute', '/usr/bin/traceroute.db'] as const;
export const MTR_PATHS = ['/usr/bin/mtr', '/usr/sbin/mtr', '/bin/mtr'] as const;

/** The programs' whole environment: the C locale (a decimal point, English messages) and a PATH for mtr's mtr-packet. */
export const TOOL_ENV: Readonly<Record<string, string>> = { PATH: '/usr/sbin:/usr/bin:/sbin:/bin', LC_ALL: 'C', LANG: 'C' };

/** `ping -i`: seconds between echo requests (the shortest an unprivileged user may ask for). */
export const PING_INTERVAL = '0.2';
/** `ping -W`: seconds ping waits for a reply after its last request. */
export const PING_WAIT_S = 2;
/** Kill ping after this: 16 requests 200 ms apart and 2 s of waiting end well within it. */
export const PING_DEADLINE_MS = 20_000;

/**
 * `traceroute -w`: the most seconds a probe is waited for. 30 silent hops of 3 probes, 16 in
 * flight at once (traceroute's default `-N`), then take some 18 s.
 */
export const TRACEROUTE_WAIT_S = 3;
export const TRACEROUTE_DEADLINE_MS = 60_000;

/**
 * `mtr -i`: seconds between rounds. Below 1 s mtr refuses an unprivileged user, so it is 1 s
 * whoever runs it: 16 rounds and the grace end within 20 s.
 */
export const MTR_INTERVAL_S = 1;
/** `mtr -G`: seconds mtr waits for late replies after its last round. */
export const MTR_GRACE_S = 2;
export const MTR_DEADLINE_MS = 60_000;
/** `mtr -o`: the report's fields: Loss%, Drop, Rcv, Snt, Last, Best, Avg, Wrst, StDev. */
export const MTR_FIELDS = 'LDRSNBAWV';

/** Bytes of standard output kept from one program; beyond it the program is killed and the call fails. */
export const MAX_STDOUT_BYTES = 256 * 1024;
/** Bytes of standard error kept (for its message); beyond it the program is killed. */
export const MAX_STDERR_BYTES = 64 * 1024;
/** A line of output longer than this is not one any of the programs prints: it is skipped unread. */
export const MAX_LINE_CHARS = 1_024;
/** Characters of a program's standard error quoted in an error message. */
export const STDERR_QUOTE_CHARS = 300;

/** After SIGTERM (abort, deadline, too much output), SIGKILL if the program is still there this much later. */
export const KILL_GRACE_MS = 1_000;

/** How long an availability report is trusted: an operator who grants a privilege sees it within this. */
export const AVAILABILITY_TTL_MS = 60_000;
/** Deadline of each availability self-test (one probe to 127.0.0.1). */
export const SELF_TEST_DEADLINE_MS = 5_000;
