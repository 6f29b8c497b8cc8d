import type { FastifyRequest } from 'fastify';
import { InvalidJsonError, ValidationError } from '../errors.js';
import { tooDeepAt } from '../lib/json-depth.js';

export { tooDeepAt };

/**
 * Where a JSON text first goes wrong, for the 400 a client reads: Fastify's parser
 * says only "Body is not valid JSON", and V8's messages sometimes give no position and echo the
 * whole body. One pass with an explicit stack (no recursion, no regex), run only on a body that
 * failed to parse, which the body limit already bounds.
 */
export function jsonSyntaxError(text: string): { at: number; problem: string } | undefined {
  const stack: Array<'{' | '['> = [];
  let i = 0;
  let mode: 'value' | 'after' | 'key' = 'value';
  const fail = (problem: string) => ({ at: i, problem });
  const found = () => (i >= text.length ? 'the end of the body' : JSON.stringify(text[i]));
  const skipBlanks = () => {
    while (i < text.length && (text[i] === ' ' || text[i] === '\t' || text[i] === '\n' || text[i] === '\r')) i++;
  };
  const digits = (): boolean => {
    const start = i;
    while (i < text.length && text[i]! >= '0' && text[i]! <= '9') i++;
    return i > start;
  };
  const string = (): string | undefined => {
    i++; // the opening quote
    while (i < text.length && text[i] !== '"') {
      const c = text.charCodeAt(i);
      if (c < 0x20) return 'a control character inside a string (escape it)';
      if (text[i] === '\\') {
        i++;
        const e = text[i];
        if (e === 'u') {
          for (let k = 0; k < 4; k++) {
            i++;
            if (!/^[0-9a-fA-F]$/.test(text[i] ?? '')) return 'a \\u escape needs four hex digits';
          }
        } else if (e === undefined || !'"\\/bfnrt'.includes(e)) return `an invalid escape \\${e ?? ''}`;
      }
      i++;
    }
    if (i >= text.length) return 'a string that is never closed';
    i++;
    return undefined;
  };
  skipBlanks();
  for (;;) {
    if (mode === 'value') {
      skipBlanks();
      const c = text[i];
      if (c === '{' || c === '[') {
        i++;
        skipBlanks();
        if (text[i] === (c === '{' ? '}' : ']')) {
          i++;
          mode = 'after';
        } else {
          stack.push(c);
          mode = c === '{' ? 'key' : 'value';
        }
        continue;
      }
      if (c === '"') {
        const problem = string();
        if (problem) return fail(problem);
      } else if (c === '-' || (c !== undefined && c >= '0' && c <= '9')) {
        if (c === '-') i++;
        if (text[i] === '0') i++;
        else if (!digits()) return fail(`a number needs digits, found ${found()}`);
        if (text[i] === '.') {
          i++;
          if (!digits()) return fail(`a number needs digits after ".", found ${found()}`);
        }
        if (text[i] === 'e' || text[i] === 'E') {
          i++;
          if (text[i] === '+' || text[i] === '-') i++;
          if (!digits()) return fail(`a number needs digits in its exponent, found ${found()}`);
        }
      } else {
        const literal = ['true', 'false', 'null'].find((word) => text.startsWith(word, i));
        if (!literal) return fail(`expected a value (an object, array, string, number, true, false or null), found ${found()}`);
        i += literal.length;
      }
      mode = 'after';
    } else if (mode === 'after') {
      skipBlanks();
      const top = stack[stack.length - 1];
      if (top === undefined) return i < text.length ? fail(`unexpected ${found()} after the JSON value`) : undefined;
      const close = top === '{' ? '}' : ']';
      if (text[i] === ',') {
        i++;
        skipBlanks();
        if (text[i] === close) return fail(`a trailing comma before "${close}"`);
        mode = top === '{' ? 'key' : 'value';
      } else if (text[i] === close) {
        i++;
        stack.pop();
      } else {
        return fail(`expected "," or "${close}", found ${found()}`);
      }
    } else {
      skipBlanks();
      if (text[i] !== '"') return fail(`expected a property name in double quotes, found ${found()}`);
      const problem = string();
      if (problem) return fail(problem);
      skipBlanks();
      if (text[i] !== ':') return fail(`expected ":" after the property name, found ${found()}`);
      i++;
      mode = 'value';
    }
  }
}

/** "line 3, column 5: expected "," or "}", found "\"b\""". */
export function describeJsonError(text: string): string {
  const error = jsonSyntaxError(text);
  // It is JSON after all: secure-json-parse refused a __proto__ or constructor.prototype key.
  if (!error) return 'the body contains a __proto__ or constructor.prototype key, which is refused';
  return `${lineAndColumn(text, error.at)}: ${error.problem}`;
}

/** "line 3, column 5" of offset `at` in `text` (lines and columns from 1). */
function lineAndColumn(text: string, at: number): string {
  let line = 1;
  let lineStart = 0;
  for (let k = 0; k < at && k < text.length; k++) {
    if (text[k] === '\n') {
      line++;
      lineStart = k + 1;
    }
  }
  return `line ${line}, column ${at - lineStart + 1}`;
}

/**
 * The deepest nesting of arrays and objects a JSON body may have. No endpoint declares more than
 * a few levels; a body much deeper cannot be stored (JSON.stringify recurses) and only costs us.
 */
export const MAX_JSON_DEPTH = 64;

type JsonParser = (request: FastifyRequest, body: string, done: (err: Error | null, body?: unknown) => void) => void;

/**
 * Fastify's JSON parser (empty bodies, prototype poisoning and all) whose "not valid JSON"
 * says where and what: `app.addContentTypeParser('application/json', opts, jsonBodyParser(default))`.
 */
export function jsonBodyParser(parse: unknown): JsonParser {
  const inner = parse as unknown as JsonParser;
  return (request, body, done) => {
    // Valid JSON, but nothing can store it (JSON.stringify recurses) and no endpoint needs it.
    const deep = tooDeepAt(body, MAX_JSON_DEPTH);
    if (deep >= 0) {
      done(new ValidationError('body', `arrays and objects nested more than ${MAX_JSON_DEPTH} levels deep (the one opened at ${lineAndColumn(body, deep)}); send the fields the endpoint declares, a few levels at most`));
      return;
    }
    inner(request, body, (err, parsed) => {
      if (err && (err as { code?: string }).code === 'FST_ERR_CTP_INVALID_JSON_BODY') done(new InvalidJsonError(describeJsonError(body)));
      else if (err) done(err);
      else done(null, parsed);
    });
  };
}
