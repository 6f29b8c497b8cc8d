import type { TSchema } from 'typebox';

/**
 * The one reader of a request schema's fields: an operation's TypeBox body (or a command's query)
 * read into what each field is, for the three surfaces that word it: the CLI's flags and help
 * (src/cli/flags.ts), the MCP tools' descriptions (src/mcp/tools.ts) and the dashboard's check
 * forms (src/http/pages/check-forms.ts). It decides what a field IS (its kind, its choices, the
 * branch a person types, its list and items, its bounds, default and description); how that is
 * written (a flag, a sentence, an input) stays with each surface.
 */

/** The JSON Schema keywords a request field uses (TypeBox writes plain JSON Schema). */
export interface FieldSchema {
  type?: string | string[];
  enum?: unknown[];
  const?: unknown;
  anyOf?: FieldSchema[];
  items?: FieldSchema;
  properties?: Record<string, FieldSchema>;
  required?: string[];
  minimum?: number;
  maximum?: number;
  minLength?: number;
  maxLength?: number;
  minItems?: number;
  maxItems?: number;
  default?: unknown;
  description?: string;
  examples?: unknown[];
}

/** How a value is typed, a type list read in this order: a flag or a ticked box first, text last but for JSON. */
export type ValueKind = 'boolean' | 'integer' | 'number' | 'array' | 'string' | 'object';

const KIND_ORDER: readonly ValueKind[] = ['boolean', 'integer', 'number', 'array', 'string', 'object'];

/** What one value of a schema is. */
export interface ValueShape {
  /** The schema as declared. */
  schema: FieldSchema;
  /** Its JSON types as declared; [] when it declares none (a union, an enum alone). */
  types: string[];
  /** The first of its types in KIND_ORDER; null when it declares none. */
  kind: ValueKind | null;
  /** The branches of a union (TypeBox's Union: `anyOf`); [] when it is none. */
  alternatives: FieldSchema[];
  /**
   * One of a few words: a union of string constants (TypeBox's Union of Literals) or an enum of
   * strings; null otherwise.
   */
  choices: string[] | null;
  /** A union's branch a person types: a string that is no constant and no enum (ports: "22,80"); null when none. */
  text: FieldSchema | null;
  /** The array: the schema itself when it is one, else a union's array branch; null when none. */
  list: FieldSchema | null;
  /** The list's items (`{}` when it declares none), read the same way; null when there is no list. */
  item: ValueShape | null;
}

export interface SchemaField extends ValueShape {
  name: string;
  required: boolean;
  description: string | undefined;
  default: unknown;
}

export function typesOf(schema: FieldSchema): string[] {
  return schema.type === undefined ? [] : Array.isArray(schema.type) ? schema.type : [schema.type];
}

function choicesOf(schema: FieldSchema, alternatives: FieldSchema[]): string[] | null {
  if (alternatives.length > 0) return alternatives.every((a) => typeof a.const === 'string') ? alternatives.map((a) => a.const as string) : null;
  return Array.isArray(schema.enum) && schema.enum.every((v) => typeof v === 'string') ? (schema.enum as string[]) : null;
}

/** What a value of `schema` is. */
export function readValue(schema: FieldSchema): ValueShape {
  const types = typesOf(schema);
  const alternatives = schema.anyOf ?? [];
  const list = types.includes('array') ? schema : (alternatives.find((a) => typesOf(a).includes('array')) ?? null);
  return {
    schema,
    types,
    kind: KIND_ORDER.find((k) => types.includes(k)) ?? null,
    alternatives,
    choices: choicesOf(schema, alternatives),
    text: alternatives.find((a) => typesOf(a).includes('string') && a.const === undefined && a.enum === undefined) ?? null,
    list,
    item: list === null ? null : readValue(list.items ?? {}),
  };
}

/** The fields of an object schema, in its declared order. */
export function schemaFields(schema: TSchema | FieldSchema | undefined): SchemaField[] {
  const object = schema as FieldSchema | undefined;
  const required = new Set(object?.required ?? []);
  return Object.entries(object?.properties ?? {}).map(([name, s]) => ({
    ...readValue(s),
    name,
    required: required.has(name),
    description: s.description,
    default: s.default,
  }));
}
