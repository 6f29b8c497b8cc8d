import type { TSchema } from 'typebox';
import { OPERATIONS, type AnyOperation } from '../operations/index.js';
import { pathWords } from '../operations/names.js';
import { JobListQuery, JobParams } from '../http/schemas/jobs.js';
import { ExportQuery, HistoryQuery } from '../http/schemas/usage.js';

/**
 * The API-user commands: one per route under /api. The tools come from the operation
 * declarations (src/operations), so a new operation is a new command with its flags; the
 * account's routes are the table below, each with the schema its route validates with.
 * test/cli/api-commands.test.ts checks that together they cover every operation of the
 * server's OpenAPI document.
 */
export interface ApiCommand {
  /** The words after `netdiag`: the operation's path words (`dns lookup`, `port scan-range`). */
  words: string[];
  method: 'GET' | 'POST' | 'DELETE';
  /** Under /api; `{id}` is the `id` flag (or the first argument). */
  path: string;
  summary: string;
  /** The body (POST) or query (GET, DELETE) fields, as flags. */
  fields?: TSchema;
  /** Path parameters, as flags. */
  params?: TSchema;
  /** An operation: may run as a job (`--async`), and its answer is rendered with its touches. */
  operation?: AnyOperation;
}

const operationCommands: ApiCommand[] = OPERATIONS.map((op) => ({
  words: pathWords(op.path),
  method: 'POST',
  path: op.path,
  summary: op.summary,
  fields: op.body,
  operation: op,
}));

/** The routes that are not operations: the account, its usage, its jobs and its webhook secret. */
const accountCommands: ApiCommand[] = [
  { words: ['user'], method: 'GET', path: '/user', summary: 'The account the token belongs to: plan, calls used today, limits' },
  { words: ['usage', 'stats'], method: 'GET', path: '/usage/stats', summary: 'Current usage and the minute, hour and day windows' },
  { words: ['usage', 'history'], method: 'GET', path: '/usage/history', summary: 'Calls per UTC day, oldest first', fields: HistoryQuery },
  { words: ['usage', 'export'], method: 'GET', path: '/usage/export', summary: 'Calls per day and endpoint, as JSON or CSV', fields: ExportQuery },
  { words: ['ip', 'my-ip'], method: 'GET', path: '/ip/my-ip', summary: "The caller's own address, located" },
  { words: ['jobs', 'list'], method: 'GET', path: '/jobs', summary: "The account's jobs, newest first, a page at a time", fields: JobListQuery },
  { words: ['jobs', 'get'], method: 'GET', path: '/jobs/{id}', summary: 'A job: its status, progress and result', params: JobParams },
  { words: ['jobs', 'cancel'], method: 'DELETE', path: '/jobs/{id}', summary: 'Cancel a queued or running job', params: JobParams },
  { words: ['jobs', 'redeliver'], method: 'POST', path: '/jobs/{id}/deliveries', summary: "Send a finished job's webhook event again", params: JobParams },
  { words: ['webhooks', 'secret'], method: 'GET', path: '/webhooks/secret', summary: 'The signing secret of webhook deliveries' },
  { words: ['webhooks', 'rotate-secret'], method: 'POST', path: '/webhooks/secret/rotate', summary: 'A new signing secret (the old one keeps signing for 24 hours)' },
];

export const API_COMMANDS: readonly ApiCommand[] = [...operationCommands, ...accountCommands];

/** The first words of the API commands, in order: `ipv6`, `dns`, ..., `user`, `usage`, `jobs`, `webhooks`. */
export const API_GROUPS: readonly string[] = [...new Set(API_COMMANDS.map((c) => c.words[0]!))];

/** The command named by the leading words of argv (the longest match), and the rest of argv. */
export function findCommand(argv: string[]): { command: ApiCommand; rest: string[] } | undefined {
  let best: ApiCommand | undefined;
  for (const c of API_COMMANDS) {
    if (c.words.every((w, i) => argv[i] === w) && (!best || c.words.length > best.words.length)) best = c;
  }
  return best && { command: best, rest: argv.slice(best.words.length) };
}
