import { parseArgs } from 'node:util';
import type { TSchema } from 'typebox';
import { UsageError } from '../errors.js';
import { schemaFields, type SchemaField, type ValueShape } from '../lib/schema-fields.js';
import { validationErrorFromAjv, validatorCompiler } from '../http/validation.js';

/**
 * The flags of a command, read from the TypeBox schema of its body or query: a field is a
 * `--kebab-case` flag, typed and bounded by its schema, and the request is judged by the server's
 * own validator before it is sent, so the command line refuses what the API would refuse.
 */

type Kind = 'string' | 'integer' | 'number' | 'boolean';

export interface Flag {
  field: string;
  /** `security_check` → `security-check`. */
  flag: string;
  kind: Kind;
  /**
   * `array`: values from commas and repeats, sent as an array; `text`: the same, joined by commas
   * into the string form the field also takes (`ports`: `[22, 80]` or `"22,80,8000-8100"`).
   */
  list: 'array' | 'text' | null;
  choices: string[] | null;
  required: boolean;
  /** The field as the schema reader (src/lib/schema-fields.ts) read it. */
  read: SchemaField;
}

export const flagName = (field: string): string => field.replace(/_/g, '-');

/** A value typed on the command line: a number or a switch as such, anything else as a string. */
const kindOf = (v: ValueShape): Kind => (v.kind === 'integer' || v.kind === 'number' || v.kind === 'boolean' ? v.kind : 'string');

function flagOf(f: SchemaField): Flag {
  const base = { field: f.name, flag: flagName(f.name), required: f.required, read: f };
  if (f.alternatives.length > 0 && f.choices) return { ...base, kind: 'string', list: null, choices: f.choices };
  // A union with a branch to type (ports: "22,80,8000-8100") is typed as such, its list joined by commas.
  if (f.text) return { ...base, kind: 'string', list: f.list ? 'text' : null, choices: null };
  if (f.list) return { ...base, kind: kindOf(f.item!), list: 'array', choices: f.item!.choices };
  return { ...base, kind: kindOf(f), list: null, choices: f.choices };
}

/** The flags of an object schema, in its declared order; the first required one may be positional. */
export function flagsOf(schema: TSchema | undefined): Flag[] {
  return schemaFields(schema).map(flagOf);
}

/** What a flag takes, for usage lines and help: `<A|AAAA|MX>`, `<integer 1-30>`, `<list of string>`. */
export function flagType(f: Flag): string {
  if (f.kind === 'boolean') return '';
  const bounds = (lo: number | undefined, hi: number | undefined, unit = '') =>
    lo !== undefined && hi !== undefined ? ` ${lo}-${hi}${unit}` : lo !== undefined ? ` ≥${lo}${unit}` : hi !== undefined ? ` ≤${hi}${unit}` : '';
  const item = f.list === 'array' ? f.read.item!.schema : f.read.schema;
  const one = f.choices ? f.choices.join('|') : f.kind === 'string' ? `string${bounds(item.minLength, item.maxLength, ' chars')}` : `${f.kind}${bounds(item.minimum, item.maximum)}`;
  if (f.list === 'array') {
    const arr = f.read.list!;
    return `<${one},...${bounds(arr.minItems, arr.maxItems, ' entries').replace(/^ /, '; ')}>`;
  }
  return f.list === 'text' ? '<list>' : `<${one}>`;
}

/** One help line per flag: the spelling, its type and bounds, default and description. */
export function flagHelp(flags: Flag[], positional: Flag | undefined): string[] {
  const left = flags.map((f) => {
    const name = f.kind === 'boolean' ? `--${f.flag}, --no-${f.flag}` : `--${f.flag} ${flagType(f)}`;
    return f === positional ? `<${f.flag}>, ${name}` : name;
  });
  const width = Math.max(0, ...left.map((l) => l.length));
  return flags.map((f, i) => {
    const { read } = f;
    const notes = [
      f.required ? 'required' : undefined,
      read.default !== undefined ? `default ${typeof read.default === 'string' ? read.default : JSON.stringify(read.default)}` : undefined,
      f.list ? 'comma-separated or repeated' : undefined,
    ].filter(Boolean);
    // The field's own words, else its items' (a plain list), else its branches'.
    const itemsWords = read.list === read.schema ? read.item!.schema.description : undefined;
    const described = read.description ?? itemsWords ?? read.alternatives.map((a) => a.description).filter(Boolean).join('; ');
    const text = [described, notes.length ? `(${notes.join('; ')})` : '']
      .filter(Boolean)
      .join(' ');
    return `  ${left[i]!.padEnd(width)}  ${text}`;
  });
}

/** The parseArgs options of these flags: booleans take `--no-` too, the others may repeat. */
export function parseOptions(flags: Flag[]): Record<string, { type: 'string' | 'boolean'; multiple?: boolean }> {
  const options: Record<string, { type: 'string' | 'boolean'; multiple?: boolean }> = {};
  for (const f of flags) {
    if (f.kind === 'boolean') {
      options[f.flag] = { type: 'boolean' };
      options[`no-${f.flag}`] = { type: 'boolean' };
    } else {
      options[f.flag] = { type: 'string', multiple: true };
    }
  }
  return options;
}

function scalar(f: Flag, text: string): string | number {
  if (f.kind === 'integer') {
    if (!/^[+-]?\d{1,15}$/.test(text.trim())) throw new UsageError(`--${f.flag}: must be an integer, not "${text}"`);
    return Number(text);
  }
  if (f.kind === 'number') {
    const n = Number(text);
    if (text.trim() === '' || !Number.isFinite(n)) throw new UsageError(`--${f.flag}: must be a number, not "${text}"`);
    return n;
  }
  return text;
}

export type Parsed = Record<string, string | boolean | (string | boolean)[] | undefined>;

/**
 * The fields a command line gives, typed: `values` as parseArgs read them, `positionals` for the
 * positional flag (a list takes them all).
 */
export function fieldsOf(flags: Flag[], values: Parsed, positionals: string[], positional: Flag | undefined): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const f of flags) {
    if (f.kind === 'boolean') {
      const yes = values[f.flag] === true;
      const no = values[`no-${f.flag}`] === true;
      if (yes && no) throw new UsageError(`--${f.flag} and --no-${f.flag} contradict each other`);
      if (yes || no) out[f.field] = yes;
      continue;
    }
    let given = (values[f.flag] as string[] | undefined) ?? [];
    if (f === positional && positionals.length > 0) {
      // A list takes its entries from both; one value given twice is a mistake.
      if (given.length > 0 && !f.list) throw new UsageError(`--${f.flag} is given twice: as the first argument and as --${f.flag}`);
      given = [...positionals, ...given];
    }
    if (given.length === 0) continue;
    if (f.list) {
      const entries = given.flatMap((v) => v.split(',')).map((v) => v.trim()).filter((v) => v !== '');
      out[f.field] = f.list === 'text' ? entries.join(',') : entries.map((v) => scalar(f, v));
    } else {
      if (given.length > 1) throw new UsageError(`--${f.flag} takes one value, not ${given.length}`);
      out[f.field] = scalar(f, given[0]!);
    }
  }
  return out;
}

const compiled = new WeakMap<object, (value: unknown) => boolean>();

/**
 * Judges `value` by the schema with the server's validator (same rules, same words) and names the
 * flag in the message: `--timeout: must be between 1 and 30`. The value is not changed (the
 * validator fills defaults and canonical spellings into a copy).
 */
export function checkFields(schema: TSchema, flags: Flag[], value: Record<string, unknown>): void {
  let validate = compiled.get(schema);
  if (!validate) {
    validate = validatorCompiler({ schema, httpPart: 'body', method: 'POST', url: '/' }) as (value: unknown) => boolean;
    compiled.set(schema, validate);
  }
  if (validate(structuredClone(value))) return;
  const { errors } = validate as unknown as { errors: Parameters<typeof validationErrorFromAjv>[0] };
  const error = validationErrorFromAjv(errors, 'body');
  const field = String(error.details?.field ?? '');
  const root = /^[^.[]+/.exec(field)?.[0] ?? '';
  const flag = flags.find((f) => f.field === root);
  throw new UsageError(flag ? `--${flag.flag}${error.message.slice(root.length)}` : error.message);
}

/** parseArgs over these options, its errors as usage errors. */
export function parseFlags(args: string[], options: ReturnType<typeof parseOptions>): { values: Parsed; positionals: string[] } {
  try {
    const { values, positionals } = parseArgs({ args, options, strict: true, allowPositionals: true });
    return { values: values as Parsed, positionals };
  } catch (err) {
    throw new UsageError((err as Error).message);
  }
}
