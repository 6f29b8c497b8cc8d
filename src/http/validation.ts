import { Ajv, type ErrorObject, type Options } from 'ajv';
import type { FastifySchemaValidationError } from 'fastify/types/schema.js';
import type { FastifySchemaCompiler } from 'fastify';
import { ValidationError } from '../errors.js';

/**
 * Bodies are strict (`"port": "80"` is a 400, never a coercion); query strings are text by
 * nature, so they alone are coerced (`?days=7` → 7, `?days=abc` still fails).
 */
const common: Options = { useDefaults: true, strict: false, allErrors: false, removeAdditional: false };
const bodyAjv = new Ajv({ ...common, coerceTypes: false });
const queryAjv = new Ajv({ ...common, coerceTypes: true });

export const validatorCompiler: FastifySchemaCompiler<unknown> = ({ schema, httpPart }) => {
  const ajv = httpPart === 'body' ? bodyAjv : queryAjv;
  return ajv.compile(schema as object) as ReturnType<FastifySchemaCompiler<unknown>>;
};

function fieldOf(error: FastifySchemaValidationError | ErrorObject, context: string | undefined): string {
  const path = error.instancePath
    .split('/')
    .slice(1)
    .map((p) => p.replace(/~1/g, '/').replace(/~0/g, '~'))
    .reduce((acc, part) => (/^\d+$/.test(part) ? `${acc}[${part}]` : acc ? `${acc}.${part}` : part), '');
  const missing = (error.params as { missingProperty?: string }).missingProperty;
  if (missing) return path ? `${path}.${missing}` : missing;
  return path || (context === 'querystring' ? 'query' : context ?? 'body');
}

function ruleOf(error: FastifySchemaValidationError | ErrorObject): string {
  const p = error.params as Record<string, unknown>;
  switch (error.keyword) {
    case 'required':
      return 'is required';
    case 'type': {
      const t = String(p.type);
      return t === 'object' ? 'must be a JSON object' : t === 'array' ? 'must be an array' : `must be ${/^[aeiou]/.test(t) ? 'an' : 'a'} ${t}`;
    }
    case 'maxItems':
      return `at most ${String(p.limit)} entries`;
    case 'minItems':
      return `at least ${String(p.limit)} ${p.limit === 1 ? 'entry' : 'entries'}`;
    case 'minimum':
      return `must be at least ${String(p.limit)}`;
    case 'maximum':
      return `must be at most ${String(p.limit)}`;
    case 'minLength':
      return p.limit === 1 ? 'must not be empty' : `must be at least ${String(p.limit)} characters`;
    case 'maxLength':
      return `must be at most ${String(p.limit)} characters`;
    case 'enum':
      return `must be one of ${(p.allowedValues as unknown[]).join(', ')}`;
    case 'const':
      return `must be ${JSON.stringify(p.allowedValue)}`;
    default:
      return error.message ?? 'is invalid';
  }
}

export function validationErrorFromAjv(
  errors: FastifySchemaValidationError[],
  context: string | undefined,
): ValidationError {
  const first = errors[0];
  if (!first) return new ValidationError(context ?? 'body', 'is invalid');
  return new ValidationError(fieldOf(first, context), ruleOf(first));
}
