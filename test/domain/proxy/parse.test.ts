import assert from 'node:assert/strict';
import { test } from 'node:test';
import { parseProxy } from '../../../src/domain/proxy/index.js';
import { ValidationError } from '../../../src/errors.js';

const spec = (input: string) => {
  const { host, port, protocol, username, password } = parseProxy(input);
  return { host, port, protocol, username, password };
};

test('every input form of docs/proxy.md, with and without credentials', () => {
  const none = { username: null, password: null };
  assert.deepEqual(spec('1.2.3.4:8080'), { host: '1.2.3.4', port: 8080, protocol: null, ...none });
  assert.deepEqual(spec('proxy.example.com:3128'), { host: 'proxy.example.com', port: 3128, protocol: null, ...none });
  assert.deepEqual(spec('1.2.3.4:8080:alice:pw'), { host: '1.2.3.4', port: 8080, protocol: null, username: 'alice', password: 'pw' });
  assert.deepEqual(spec('alice:pw@1.2.3.4:8080'), { host: '1.2.3.4', port: 8080, protocol: null, username: 'alice', password: 'pw' });
  assert.deepEqual(spec('http://1.2.3.4:8080'), { host: '1.2.3.4', port: 8080, protocol: 'http', ...none });
  assert.deepEqual(spec('HTTPS://alice:pw@1.2.3.4:8080/'), { host: '1.2.3.4', port: 8080, protocol: 'https', username: 'alice', password: 'pw' });
  assert.deepEqual(spec('socks4://1.2.3.4:1080'), { host: '1.2.3.4', port: 1080, protocol: 'socks4', ...none });
  assert.deepEqual(spec('socks4a://bob@1.2.3.4:1080'), { host: '1.2.3.4', port: 1080, protocol: 'socks4', username: 'bob', password: null });
  assert.deepEqual(spec('socks5://a:b@1.2.3.4:1080'), { host: '1.2.3.4', port: 1080, protocol: 'socks5', username: 'a', password: 'b' });
  assert.deepEqual(spec('socks5h://a:b@host.example:1080'), { host: 'host.example', port: 1080, protocol: 'socks5', username: 'a', password: 'b' });
  assert.equal(parseProxy('  1.2.3.4:8080 ').input, '1.2.3.4:8080', 'trimmed');
});

test('IPv6 hosts in brackets in every form', () => {
  const v6 = { host: '2001:db8::1', port: 8080 };
  assert.deepEqual(spec('[2001:db8::1]:8080'), { ...v6, protocol: null, username: null, password: null });
  assert.deepEqual(spec('[2001:db8::1]:8080:u:p'), { ...v6, protocol: null, username: 'u', password: 'p' });
  assert.deepEqual(spec('u:p@[2001:db8::1]:8080'), { ...v6, protocol: null, username: 'u', password: 'p' });
  assert.deepEqual(spec('socks5://u:p@[2001:db8::1]:8080'), { ...v6, protocol: 'socks5', username: 'u', password: 'p' });
});

test("passwords with ':' and '@', usernames that are e-mail addresses, percent-escapes in URLs", () => {
  assert.deepEqual(spec('1.2.3.4:8080:alice:pa:ss@word'), { host: '1.2.3.4', port: 8080, protocol: null, username: 'alice', password: 'pa:ss@word' });
  assert.deepEqual(spec('1.2.3.4:8080:me@mail.example:1234'), { host: '1.2.3.4', port: 8080, protocol: null, username: 'me@mail.example', password: '1234' });
  assert.deepEqual(spec('alice:pa:ss@word@1.2.3.4:8080'), { host: '1.2.3.4', port: 8080, protocol: null, username: 'alice', password: 'pa:ss@word' });
  assert.deepEqual(spec('admin:1234@1.2.3.4:8080'), { host: '1.2.3.4', port: 8080, protocol: null, username: 'admin', password: '1234' });
  assert.deepEqual(spec('http://me%40mail.example:p%3Aw%2F@1.2.3.4:8080'), { host: '1.2.3.4', port: 8080, protocol: 'http', username: 'me@mail.example', password: 'p:w/' });
  assert.deepEqual(spec('1.2.3.4:8080:alice:'), { host: '1.2.3.4', port: 8080, protocol: null, username: 'alice', password: '' });
});

test('anything else is a ValidationError naming the field and the rule', () => {
  const cases: Array<[unknown, RegExp]> = [
    ['1.2.3.4', /has no port number/],
    ['1.2.3.4:', /has no port number/],
    ['1.2.3.4:65536', /port must be 1-65535, got 65536/],
    ['1.2.3.4:http', /has no port number/],
    ['1.2.3.4:8080:alice', /has a username but no password/],
    ['1.2.3.4:8080::pw', /username must not be empty/],
    ['2001:db8::1:8080', /IPv6 address without brackets/],
    ['2001:db8::1', /IPv6 address without brackets/],
    ['[2001:db8::1:8080', /without closing it/],
    ['[1.2.3.4]:8080', /brackets only an IPv6 address/],
    ['[2001:db8::1]', /has no port/],
    ['ftp://1.2.3.4:21', /scheme "ftp" is not supported/],
    ['http://1.2.3.4:8080/x', /path, query or fragment/],
    ['http://1.2.3.4:8080?x', /path, query or fragment/],
    ['http://%zz:pw@1.2.3.4:8080', /username has a malformed %-escape/],
    ['1.2.3.4 :8080', /white space/],
    [':8080', /has no host/],
    ['bad_host:8080', /hostname labels/],
    ['999.1.1.1:80', /not a valid IPv4 address/],
    ['1.2.3.4:8080:u:p\u0007', /control characters/],
    [`1.2.3.4:8080:${'u'.repeat(256)}:p`, /username must be at most 255 bytes/],
    ['', /must not be empty/],
    [42, /must be a string/],
  ];
  for (const [input, rule] of cases) {
    assert.throws(
      () => parseProxy(input, 'proxies[3]'),
      (err: unknown) => err instanceof ValidationError && err.message.startsWith('proxies[3]: ') && rule.test(err.message) && err.details?.field === 'proxies[3]',
      String(input),
    );
  }
});
