import type { AnyOperation } from '../../operations/index.js';
import { pathWords } from '../../operations/names.js';
import { ValidationError } from '../../errors.js';
import { schemaFields, type SchemaField } from '../../lib/schema-fields.js';
import { labelOf } from '../../operations/shared/words.js';

/**
 * The Checks section's forms, generated from the operation declarations (src/operations): each
 * property of an operation's body schema, as src/lib/schema-fields.ts reads it, becomes a field,
 * so an operation gets its form by being declared. The form's text is turned back into the JSON body the API takes; the API's own
 * validator (the injected call) judges it and words any refusal.
 */

/** How a schema property is asked for. */
export type FieldKind = 'text' | 'number' | 'checkbox' | 'select' | 'lines' | 'json';

export interface FormField {
  name: string;
  label: string;
  kind: FieldKind;
  required: boolean;
  hint: string;
  /** number: its bounds; text: its length bound. */
  min?: number;
  max?: number;
  maxlength?: number;
  /** select: the choices; '' first when the field may be left out. */
  options?: string[];
  /** What the form shows before anyone typed: the schema's default, as text. */
  value: string;
  /** checkbox: ticked by default. */
  checked?: boolean;
  /** lines: the items are integers. */
  integers?: boolean;
  placeholder?: string;
}

export interface CheckTool {
  /** Its address under /checks: '/dns/lookup-bulk' → 'dns-lookup-bulk'. */
  slug: string;
  path: string;
  summary: string;
  /** The first tag: the group it is listed under. */
  group: string;
  fields: FormField[];
  probe: boolean;
}

/** The longest text a JSON field of a form may hold (the form body's own bound is 16 KiB). */
const JSON_FIELD_MAX_CHARS = 8_000;

function fieldOf(f: SchemaField): FormField {
  const s = f.schema;
  const base = { name: f.name, label: labelOf(f.name), required: f.required, hint: f.description ?? '' };
  const dflt = f.default;
  // An enum, or a union of string constants (TypeBox's Union of Literals): one of a few words.
  if (f.choices) {
    const options = f.choices;
    return { ...base, kind: 'select', options: f.required ? options : ['', ...options], value: typeof dflt === 'string' ? dflt : f.required ? options[0]! : '' };
  }
  // A union (ports: a list or a string spec): its string branch is the one a person types.
  if (f.text) {
    const { text } = f;
    const placeholder = typeof text.examples?.[0] === 'string' ? text.examples[0] : undefined;
    return { ...base, kind: 'text', hint: text.description ?? base.hint, value: '', ...(placeholder ? { placeholder } : {}), ...(text.maxLength ? { maxlength: text.maxLength } : {}) };
  }
  if (f.kind === 'boolean') return { ...base, kind: 'checkbox', value: 'true', checked: dflt === true };
  if (f.kind === 'integer' || f.kind === 'number') {
    return {
      ...base,
      kind: 'number',
      value: '',
      ...(typeof dflt === 'number' ? { placeholder: String(dflt) } : {}),
      ...(s.minimum !== undefined ? { min: s.minimum } : {}),
      ...(s.maximum !== undefined ? { max: s.maximum } : {}),
    };
  }
  const item = f.kind === 'array' ? f.item : null;
  if (item && (item.types.includes('string') || item.types.includes('integer'))) {
    const hint = [item.schema.description ?? f.description, `one per line${s.maxItems ? `, at most ${s.maxItems}` : ''}`].filter(Boolean).join('; ');
    return { ...base, kind: 'lines', hint, value: '', integers: !item.types.includes('string') };
  }
  if (f.types.includes('string')) {
    return { ...base, kind: 'text', value: typeof dflt === 'string' ? dflt : '', ...(s.maxLength ? { maxlength: s.maxLength } : {}) };
  }
  // Anything else (an object, a list of objects): JSON, checked by the API's validator.
  return { ...base, kind: 'json', hint: [base.hint, 'JSON'].filter(Boolean).join('; '), value: dflt === undefined ? '' : JSON.stringify(dflt) };
}

/** The optional webhook every job may carry, as the route adds it beside the operation's fields. */
const WEBHOOK_FIELD: FormField = {
  name: 'webhook_url',
  label: 'Webhook URL',
  kind: 'text',
  required: false,
  hint: 'https://…: sent the job when it finishes, signed with your webhook secret',
  value: '',
  maxlength: 2048,
};

export function checkToolOf(op: AnyOperation): CheckTool {
  const fields = schemaFields(op.body).map(fieldOf);
  return { slug: pathWords(op.path).join('-'), path: op.path, summary: op.summary, group: op.tags[0] ?? 'other', fields: [...fields, WEBHOOK_FIELD], probe: op.probe };
}

function text(form: Record<string, unknown>, name: string): string {
  const v = form[name];
  return typeof v === 'string' ? v : '';
}

/**
 * The JSON body a form's fields make: empty optional fields left out (the API's defaults apply),
 * numbers and ticks as JSON numbers and booleans, lines as a list. Text that is not what its
 * field takes is sent as typed, for the API's validator to refuse in its own words; only a JSON
 * field that does not parse is refused here.
 */
export function bodyOf(tool: CheckTool, form: Record<string, unknown>): Record<string, unknown> {
  const body: Record<string, unknown> = {};
  for (const f of tool.fields) {
    const raw = text(form, f.name);
    if (f.kind === 'checkbox') {
      // A hidden "false" precedes the box: the form sends the box's "true" last when it is ticked.
      if (raw !== '') body[f.name] = raw === 'true';
      continue;
    }
    const value = f.kind === 'lines' || f.kind === 'json' ? raw : raw.trim();
    if (value.trim() === '') {
      if (f.required && f.kind !== 'lines') body[f.name] = value;
      continue;
    }
    switch (f.kind) {
      case 'number':
        body[f.name] = /^-?\d{1,15}(\.\d{1,15})?$/.test(value) ? Number(value) : value;
        break;
      case 'lines': {
        const items = value.split('\n').map((l) => l.trim()).filter((l) => l !== '');
        body[f.name] = f.integers ? items.map((l) => (/^\d{1,9}$/.test(l) ? Number(l) : l)) : items;
        break;
      }
      case 'json':
        if (value.length > JSON_FIELD_MAX_CHARS) throw new ValidationError(f.name, `at most ${JSON_FIELD_MAX_CHARS} characters of JSON`);
        try {
          body[f.name] = JSON.parse(value);
        } catch {
          throw new ValidationError(f.name, 'is not JSON: write it as JSON, e.g. {"name": "value"}');
        }
        break;
      default:
        body[f.name] = value;
    }
  }
  return body;
}

/** The form's fields filled from a body (a job run again, a form sent back with its refusal). */
export function fieldsFilled(tool: CheckTool, values: Record<string, unknown>): FormField[] {
  return tool.fields.map((f) => {
    const v = values[f.name];
    if (v === undefined) return f;
    if (f.kind === 'checkbox') return { ...f, checked: v === true || v === 'true' };
    if (f.kind === 'lines') return { ...f, value: Array.isArray(v) ? v.join('\n') : String(v) };
    if (f.kind === 'json') return { ...f, value: typeof v === 'string' ? v : JSON.stringify(v) };
    return { ...f, value: Array.isArray(v) ? v.join(',') : String(v) };
  });
}
