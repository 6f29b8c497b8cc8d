import assert from 'node:assert/strict';
import { test } from 'node:test';
import { describeJsonError, jsonSyntaxError, MAX_JSON_DEPTH, tooDeepAt } from '../../src/http/json-body.js';

test('a JSON syntax error is located by line and column and named', () => {
  const cases: Array<[string, string]> = [
    ['{"host":}', 'line 1, column 9: expected a value (an object, array, string, number, true, false or null), found "}"'],
    ['{"a":1,}', 'line 1, column 8: a trailing comma before "}"'],
    ['{"a":1', 'line 1, column 7: expected "," or "}", found the end of the body'],
    ['{\n  "a": 1\n  "b": 2\n}', 'line 3, column 3: expected "," or "}", found "\\""'],
    ["{'a':1}", 'line 1, column 2: expected a property name in double quotes, found "\'"'],
    ['{a:1}', 'line 1, column 2: expected a property name in double quotes, found "a"'],
    ['[1,2]x', 'line 1, column 6: unexpected "x" after the JSON value'],
    ['"abc', 'line 1, column 5: a string that is never closed'],
    ['{"a" 1}', 'line 1, column 6: expected ":" after the property name, found "1"'],
    ['[01]', 'line 1, column 3: expected "," or "]", found "1"'],
    ['[-]', 'line 1, column 3: a number needs digits, found "]"'],
    ['[1.]', 'line 1, column 4: a number needs digits after ".", found "]"'],
    ['["\\x"]', 'line 1, column 4: an invalid escape \\x'],
    ['[tru]', 'line 1, column 2: expected a value (an object, array, string, number, true, false or null), found "t"'],
  ];
  for (const [text, message] of cases) {
    assert.throws(() => JSON.parse(text), SyntaxError, text);
    assert.equal(describeJsonError(text), message, text);
  }
});

test('valid JSON has no syntax error, however deep (no recursion)', () => {
  for (const text of ['{}', '[]', ' {"a": [1, -2.5e+3, "x\\u00e9\\n", true, false, null, {"b": {}}]} ', '0', '"s"']) {
    assert.equal(jsonSyntaxError(text), undefined, text);
  }
  const deep = `${'['.repeat(200_000)}${']'.repeat(200_000)}`;
  assert.equal(jsonSyntaxError(deep), undefined);
  assert.match(describeJsonError(`${'['.repeat(200_000)}`), /found the end of the body/);
});

test('tooDeepAt: the first bracket past the bound, brackets in strings (escaped quotes included) not counted, one pass', () => {
  assert.equal(tooDeepAt('{"a":[[1]]}', 3), -1);
  assert.equal(tooDeepAt('{"a":[[1]]}', 2), 6);
  assert.equal(tooDeepAt('{"a":"[[[\\"[[[","b":[]}', 2), -1, 'an escaped quote does not end the string');
  assert.equal(tooDeepAt('{"a":"\\\\",[[1]]}', 2), 11, 'an escaped backslash does not escape the quote after it');
  assert.equal(tooDeepAt('{"a":"never closed [[[[', 1), -1);
  const depth = 300_000;
  assert.equal(tooDeepAt(`{"x":${'['.repeat(depth)}${']'.repeat(depth)}}`, MAX_JSON_DEPTH), 5 + MAX_JSON_DEPTH - 1);
  // Quadratic would take minutes here: a megabyte of escapes and quotes.
  assert.equal(tooDeepAt(`[${'"\\\\\\"",'.repeat(100_000)}""]`, 1), -1);
});
