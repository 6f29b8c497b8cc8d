import type { OperationExamples } from '../shared/examples.js';

const CHECKED_AT = '2026-11-23T04:52:29.511Z';

/** A working proxy and a dead one: /proxy/check-bulk shows them too. */
export const WORKING_PROXY = {
  proxy: '203.0.113.7:8080:user:***',
  status: 'working',
  protocol: 'http',
  response_time: 412.35,
  anonymity_level: 'elite',
  proxy_headers: [],
  ssl_support: true,
  location: { country: 'Germany', country_code: 'DE', city: 'Frankfurt am Main', region: 'Hesse', isp: 'Example Hosting GmbH' },
  speed: { download: '38.42 Mbps', upload: '12.07 Mbps', latency: '96.4ms' },
  exit_ip: '203.0.113.7',
  error: null,
  checked_at: CHECKED_AT,
  host: '203.0.113.7',
  port: 8080,
  checks: {
    protocol: { status: 'ok', error: null, time: 210.4, tried: ['http'] },
    anonymity: { status: 'ok', error: null, time: 412.35 },
    ssl: { status: 'ok', error: null, time: 388.9 },
    speed: { status: 'ok', error: null, time: 1843.2 },
  },
};

export const DEAD_PROXY = {
  proxy: 'socks5://198.51.100.4:1080',
  status: 'timeout',
  protocol: null,
  response_time: null,
  anonymity_level: null,
  ssl_support: null,
  location: null,
  speed: null,
  exit_ip: null,
  error: 'no answer within 10 s',
  checked_at: CHECKED_AT,
  host: '198.51.100.4',
  port: 1080,
  checks: { protocol: { status: 'timeout', error: 'no answer within 10 s', time: 10000, tried: ['socks5'] } },
};

export const proxyCheckExamples: OperationExamples = {
  body: {
    colon: { summary: 'host:port:user:pass', value: { proxy: '203.0.113.7:8080:user:pass' } },
    url: { summary: 'a SOCKS5 URL', value: { proxy: 'socks5://198.51.100.4:1080', check_speed: false } },
    at: { summary: 'user:pass@host:port, protocol and TLS only', value: { proxy: 'user:pass@203.0.113.7:3128', check_anonymity: false, check_speed: false, check_location: false } },
  },
  ok: {
    'application/json': {
      working: { summary: 'a working elite HTTP proxy', value: { success: true, data: WORKING_PROXY, message: 'proxy is working' } },
      timeout: { summary: 'a proxy that did not answer (still a 200)', value: { success: true, data: DEAD_PROXY, message: 'proxy timed out' } },
    },
  },
  invalid: { field: 'proxy', message: 'proxy: must be host:port, host:port:user:pass, user:pass@host:port or a proxy URL' },
};
