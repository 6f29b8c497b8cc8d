import { Ajv, type ErrorObject, type Options, type ValidateFunction } from 'ajv';
import type { FastifySchemaValidationError } from 'fastify/types/schema.js';
import type { FastifySchemaCompiler } from 'fastify';
import { ValidationError } from '../errors.js';
import { canonicalOf } from '../lib/canonical.js';

/**
 * Bodies are strict (`"port": "80"` is a 400, never a coercion); query strings are text by
 * nature, so they alone are coerced (`?days=7` → 7, `?days=abc` still fails).
 */
// verbose: an error carries its schema, so a minimum's message can name the maximum too.
const common: Options = { useDefaults: true, strict: false, allErrors: false, removeAdditional: false, verbose: true };
const bodyAjv = new Ajv({ ...common, coerceTypes: false });
const queryAjv = new Ajv({ ...common, coerceTypes: true });

/**
 * The one rule for enumerations (src/lib/canonical.ts): every string enum of a request, body or query, is
 * accepted in any case and replaced by its canonical spelling before `enum` judges it, so the
 * handler sees "web" for "WEB" and a refusal lists the canonical values. The validator marks
 * every string enum itself, so no schema can forget to.
 */
export const CASE_INSENSITIVE_KEYWORD = 'x-case-insensitive';
for (const ajv of [bodyAjv, queryAjv]) {
  ajv.addKeyword({
    keyword: CASE_INSENSITIVE_KEYWORD,
    schemaType: 'boolean',
    modifying: true,
    before: 'enum',
    validate: (on: boolean, data: unknown, parentSchema?: { enum?: unknown[] }, cxt?: { parentData: Record<string | number, unknown>; parentDataProperty: string | number }) => {
      if (!on || typeof data !== 'string' || !cxt?.parentData || !Array.isArray(parentSchema?.enum)) return true;
      const allowed = parentSchema.enum.filter((v): v is string => typeof v === 'string');
      const canonical = canonicalOf(allowed, data);
      if (canonical !== undefined && canonical !== data) cxt.parentData[cxt.parentDataProperty] = canonical;
      return true;
    },
  });
}

/** A copy of a request schema with every all-string `enum` marked case-insensitive. */
function markEnums(schema: unknown): unknown {
  if (Array.isArray(schema)) return schema.map(markEnums);
  if (schema === null || typeof schema !== 'object') return schema;
  const copy: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(schema)) copy[key] = key === 'enum' || key === 'const' || key === 'default' || key === 'examples' ? value : markEnums(value);
  const values = copy.enum;
  if (Array.isArray(values) && values.length > 0 && values.every((v) => typeof v === 'string')) copy[CASE_INSENSITIVE_KEYWORD] = true;
  return copy;
}

/**
 * Each distinct request schema is compiled once per process and Ajv: routes share schemas, and so
 * do the apps one process builds (a test file builds dozens). markEnums' copy is a new object each
 * time, which Ajv's own cache (by object) would never find.
 */
const validators = new Map<Ajv, Map<string, ValidateFunction>>([
  [bodyAjv, new Map()],
  [queryAjv, new Map()],
]);

export const validatorCompiler: FastifySchemaCompiler<unknown> = ({ schema, httpPart }) => {
  const ajv = httpPart === 'body' ? bodyAjv : queryAjv;
  const marked = markEnums(schema) as object;
  const compiled = validators.get(ajv)!;
  const key = JSON.stringify(marked);
  let validate = compiled.get(key);
  if (!validate) compiled.set(key, (validate = ajv.compile(marked)));
  return validate as ReturnType<FastifySchemaCompiler<unknown>>;
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
    case 'maximum': {
      // Both bounds whenever the schema has both: "days: must be between 1 and 365".
      const bounds = (error as { parentSchema?: { minimum?: unknown; maximum?: unknown } }).parentSchema;
      if (typeof bounds?.minimum === 'number' && typeof bounds.maximum === 'number') return `must be between ${bounds.minimum} and ${bounds.maximum}`;
      return error.keyword === 'minimum' ? `must be at least ${String(p.limit)}` : `must be at most ${String(p.limit)}`;
    }
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
  // A field of several forms (`ports`: an array or a string) names them all, not just the first.
  if (first.keyword === 'type' && errors.some((e) => e.keyword === 'anyOf' && e.instancePath === first.instancePath)) {
    const types = errors.filter((e) => e.keyword === 'type' && e.instancePath === first.instancePath).map((e) => String((e.params as { type?: unknown }).type));
    const named = types.map((t) => (t === 'null' ? 'null' : `${/^[aeiou]/.test(t) ? 'an' : 'a'} ${t}`));
    return new ValidationError(fieldOf(first, context), `must be ${named.join(' or ')}`);
  }
  return new ValidationError(fieldOf(first, context), ruleOf(first));
}
