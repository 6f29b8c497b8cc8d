import assert from 'node:assert/strict';
import { test } from 'node:test';
import { parseProxy } from '../../../src/domain/proxy/parse.js';
import { redactProxyInput } from '../../../src/domain/proxy/redact.js';
import { ValidationError } from '../../../src/errors.js';

test('the password of every input form is replaced by ***, and nothing else changes', () => {
  const cases: Array<[string, string]> = [
    ['1.2.3.4:8080', '1.2.3.4:8080'],
    ['1.2.3.4:8080:user:pass', '1.2.3.4:8080:user:***'],
    ['1.2.3.4:8080:user:pa:ss@x', '1.2.3.4:8080:user:***'],
    ['proxy.example:3128:user:', 'proxy.example:3128:user:***'],
    ['[2001:db8::1]:8080:user:pass', '[2001:db8::1]:8080:user:***'],
    ['[2001:db8::1]:8080', '[2001:db8::1]:8080'],
    ['user:pass@1.2.3.4:8080', 'user:***@1.2.3.4:8080'],
    ['user:p:a@ss@1.2.3.4:8080', 'user:***@1.2.3.4:8080'],
    ['user:pass@[2001:db8::1]:8080', 'user:***@[2001:db8::1]:8080'],
    ['socks5://user:p%40ss@1.2.3.4:1080', 'socks5://user:***@1.2.3.4:1080'],
    ['https://user:pass@proxy.example:443/', 'https://user:***@proxy.example:443/'],
    ['socks4://user@1.2.3.4:1080', 'socks4://user@1.2.3.4:1080'],
    ['http://1.2.3.4:3128', 'http://1.2.3.4:3128'],
  ];
  for (const [input, shown] of cases) {
    const spec = parseProxy(input);
    assert.equal(redactProxyInput(spec.input), shown, input);
    if (spec.password) assert.ok(!redactProxyInput(spec.input).includes(spec.password), input);
  }
});

test('refused input is redacted the same way in the error that quotes it; an IPv6 address without brackets is left alone', () => {
  const refused = (input: string): string => {
    try {
      parseProxy(input);
    } catch (err) {
      assert.ok(err instanceof ValidationError);
      return err.message;
    }
    assert.fail(`${input} was accepted`);
  };
  assert.match(refused('http://u:hunter22@1.2.3.4:80/x'), /^proxy: "http:\/\/u:\*\*\*@1\.2\.3\.4:80\/x" has a path/);
  assert.match(refused('u:hunter22@1.2.3.4'), /^proxy: "u:\*\*\*@1\.2\.3\.4" has no port/);
  assert.match(refused('1.2.3.4:http:u:hunter22'), /^proxy: "1\.2\.3\.4:http:u:\*\*\*"/);
  assert.match(refused('2001:db8::1:8080'), /IPv6 address without brackets/);
  assert.equal(redactProxyInput('2001:db8::1:8080'), '2001:db8::1:8080');
  assert.match(refused(''), /^proxy: must not be empty/, 'nothing to hide, the message as it was');
  let bulk: unknown;
  try {
    parseProxy('u:hunter22@h', 'proxies[3]');
  } catch (err) {
    bulk = err;
  }
  assert.ok(bulk instanceof ValidationError);
  assert.match(bulk.message, /^proxies\[3\]: "u:\*\*\*@h" has no port number/);
  assert.deepEqual(bulk.details, { field: 'proxies[3]' });
});
