import { RDAP_MAX_JSON_DEPTH, RDAP_MAX_RAW_CHARS } from './defaults.js';
import { field, obj, parseJsonText, str } from './json.js';
import { readDomain, readNetwork, type DomainFields, type NetworkFields } from './objects.js';

/** What an answer's bytes are read as. */
export type AnswerKind = 'domain' | 'network';

/** An answer's body, read: its fields, or why not; `raw` is its text, cut at RDAP_MAX_RAW_CHARS. */
export interface DecodedAnswer {
  raw: string;
  error: string | null;
  objectClass: string | null;
  domain: DomainFields | null;
  network: NetworkFields | null;
}

/**
 * Turns an answer's bytes into its fields (UTF-8, the depth counted before JSON.parse, every field
 * type-checked): all the CPU an answer costs is here, in one pure function, so that it can run off
 * the event loop (the infra layer's RDAP client runs it in a worker thread) or in line (tests,
 * small answers).
 */
export interface RdapDecoder {
  decode(body: Uint8Array, kind: AnswerKind, signal?: AbortSignal): Promise<DecodedAnswer>;
  /** Lets go of what it holds (a thread), at shutdown. */
  close?(): Promise<void>;
}

export function decodeAnswer(body: Uint8Array, kind: AnswerKind): DecodedAnswer {
  const text = new TextDecoder('utf-8').decode(body);
  const out: DecodedAnswer = { raw: text.slice(0, RDAP_MAX_RAW_CHARS), error: null, objectClass: null, domain: null, network: null };
  const parsed = parseJsonText(text, RDAP_MAX_JSON_DEPTH);
  if ('error' in parsed) return { ...out, error: parsed.error };
  const root = obj(parsed.value);
  if (root === null) return { ...out, error: 'the answer is no JSON object' };
  out.objectClass = str(field(root, 'objectClassName'))?.toLowerCase() ?? null;
  if (kind === 'domain') out.domain = readDomain(root);
  else out.network = readNetwork(root);
  return out;
}

/** Decoding on the calling thread. */
export const inlineDecoder: RdapDecoder = {
  decode: (body, kind) => Promise.resolve(decodeAnswer(body, kind)),
};
