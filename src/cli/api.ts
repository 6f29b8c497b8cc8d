import { createClient, NetdiagConnectionError, NetdiagError, type NetdiagClient } from '../../clients/typescript/src/index.js';
import { FINISHED_STATUSES, type JobStatus } from '../domain/jobs/types.js';
import { UsageError } from '../errors.js';
import { API_COMMANDS, API_GROUPS, findCommand, type ApiCommand } from './api-commands.js';
import { checkFields, fieldsOf, flagHelp, flagsOf, flagType, parseFlags, parseOptions, type Flag } from './flags.js';
import { itemLine, render, TOUCHES, type Touch } from './render.js';
import type { CliIo } from './io.js';
import { Progress } from './progress.js';

/**
 * `netdiag <tool> ...` for API users: one command per route under /api (api-commands.ts), its
 * flags from the route's schema, the call made with the TypeScript client. Exit codes: 0 success,
 * 2 a usage error (nothing was sent), 3 an error answer of the server, 4 no server to answer.
 */

export const EXIT = { ok: 0, usage: 2, server: 3, unreachable: 4 } as const;

/** The flags every API command takes; a command's own field of the same name wins after its words. */
const GLOBAL_OPTIONS = {
  url: { type: 'string' },
  token: { type: 'string' },
  json: { type: 'boolean' },
  async: { type: 'boolean' },
  'webhook-url': { type: 'string' },
  help: { type: 'boolean', short: 'h' },
} as const;

const GLOBAL_HELP = `Global flags:
  --url URL           the server (default NETDIAG_URL)
  --token TOKEN       an API token, nd_... (default NETDIAG_TOKEN)
  --json              print the answer's data as JSON (the default when stdout is not a terminal)`;

const JOB_HELP = `
  --async             run it as a job: a progress bar, its items as they complete, then the result
  --webhook-url URL   with --async: POST the finished job there (signed, see netdiag webhooks secret)`;

function commandFlags(command: ApiCommand): { params: Flag[]; fields: Flag[]; all: Flag[]; positional: Flag | undefined } {
  const params = flagsOf(command.params);
  // webhook_url is --webhook-url, a global flag of --async, whether the schema lists it or not.
  const fields = flagsOf(command.fields).filter((f) => f.field !== 'webhook_url');
  const all = [...params, ...fields];
  return { params, fields, all, positional: all.find((f) => f.required) };
}

/** `dns lookup <domain> [flags]`; `long` spells out what each required flag takes. */
function usageLine(command: ApiCommand, long = false): string {
  const { all, positional } = commandFlags(command);
  const shown = all.filter((f) => f.required && f !== positional).map((f) => `--${f.flag} ${long ? flagType(f) : `<${f.flag}>`}`);
  const optional = all.some((f) => !f.required) ? ' [flags]' : '';
  return `${command.words.join(' ')}${positional ? ` <${positional.flag}>` : ''}${shown.length ? ` ${shown.join(' ')}` : ''}${optional}`;
}

function lines(commands: readonly ApiCommand[]): string {
  const usages = commands.map((c) => usageLine(c));
  const width = Math.min(44, Math.max(...usages.map((u) => u.length)));
  return commands.map((c, i) => `  netdiag ${usages[i]!.padEnd(width)}  ${c.summary}`).join('\n');
}

const isTool = (c: ApiCommand): boolean => c.operation !== undefined;

/** The API-user half of `netdiag --help`: the tools, then the account's commands. */
export function apiUsage(): string {
  return `Diagnostics (call a server: NETDIAG_URL and NETDIAG_TOKEN, or --url and --token):
${lines(API_COMMANDS.filter(isTool))}

Your account, usage, jobs and webhooks:
${lines(API_COMMANDS.filter((c) => !isTool(c)))}

Each command's flags: netdiag <command> --help. --json prints JSON; --async runs a tool as a job.`;
}

export function groupUsage(group: string): string {
  const commands = API_COMMANDS.filter((c) => c.words[0] === group);
  return `usage: netdiag ${group} <${commands.map((c) => c.words.slice(1).join(' ') || '(none)').join('|')}> [flags]

${lines(commands)}

${GLOBAL_HELP}${commands.some(isTool) ? JOB_HELP : ''}`;
}

export function commandUsage(command: ApiCommand): string {
  const { all, positional } = commandFlags(command);
  return `usage: netdiag ${usageLine(command, true)}

${command.summary} (${command.method} /api${command.path}).
${all.length ? `\n${flagHelp(all, positional).join('\n')}\n` : ''}${positional?.list ? `\nThe first arguments are the --${positional.flag} entries.\n` : ''}
${GLOBAL_HELP}${isTool(command) ? JOB_HELP : ''}`;
}

/** Is argv an API command (its first word a group of them)? */
export const isApiCommand = (argv: string[]): boolean => argv[0] !== undefined && API_GROUPS.includes(argv[0]);

/** The command, the help it asks for, or a usage error naming what is wrong. */
function resolve(argv: string[]): { command: ApiCommand; rest: string[] } | { help: string } {
  const found = findCommand(argv);
  const wantsHelp = argv.includes('--help') || argv.includes('-h');
  if (found) return wantsHelp ? { help: commandUsage(found.command) } : found;
  const group = argv[0]!;
  if (wantsHelp) return { help: groupUsage(group) };
  const action = argv[1];
  throw new UsageError(action && !action.startsWith('-') ? `unknown command "${group} ${action}"` : `"${group}" needs a subcommand`, groupUsage(group));
}

interface Request {
  command: ApiCommand;
  path: string;
  body: Record<string, unknown> | undefined;
  query: Record<string, string | number | boolean> | undefined;
  url: string;
  token: string;
  json: boolean;
  async: boolean;
  webhookUrl: string | undefined;
}

/** Everything from argv and the environment, checked before anything is sent. */
function prepare(command: ApiCommand, rest: string[], io: CliIo): Request {
  const { params, fields, all, positional } = commandFlags(command);
  const own = parseOptions(all);
  const globals = Object.fromEntries(Object.entries(GLOBAL_OPTIONS).filter(([name]) => !(name in own)));
  const usage = commandUsage(command);
  try {
    const { values, positionals } = parseFlags(rest, { ...globals, ...own });
    if (positionals.length > 1 && !positional?.list) throw new UsageError(`unexpected argument "${positionals[1]}"`);
    if (positionals.length > 0 && !positional) throw new UsageError(`${command.words.join(' ')} takes no argument, not "${positionals[0]}"`);
    const given = fieldsOf(all, values, positionals, positional);
    const pick = (flags: Flag[]) => Object.fromEntries(flags.filter((f) => f.field in given).map((f) => [f.field, given[f.field]]));
    const pathValues = pick(params);
    const fieldValues = pick(fields);
    if (command.params) checkFields(command.params, params, pathValues);
    if (command.fields) checkFields(command.fields, fields, fieldValues);
    const async = values.async === true;
    const webhookUrl = values['webhook-url'] as string | undefined;
    if (async && !command.operation) throw new UsageError(`--async runs a tool as a job; ${command.words.join(' ')} is not one`);
    if (webhookUrl !== undefined && !async) throw new UsageError('--webhook-url goes with --async (a webhook is sent when a job finishes)');
    // A command whose body has a field of a global flag's name (/http/check's `url`) takes the
    // flag as that field; the server then comes from the environment only.
    const global = (name: 'url' | 'token') => (name in own ? undefined : (values[name] as string | undefined));
    const url = global('url') ?? io.env.NETDIAG_URL;
    const token = global('token') ?? io.env.NETDIAG_TOKEN;
    if (!url) throw new UsageError('url' in own ? 'no server: set NETDIAG_URL (here --url is the URL to check)' : 'no server: set NETDIAG_URL or pass --url (e.g. http://localhost:8080)');
    if (!/^https?:\/\/[^/]/i.test(url)) throw new UsageError(`--url: must be an http or https URL, not "${url}"`);
    if (!token) throw new UsageError('no token: set NETDIAG_TOKEN or pass --token (netdiag token create on the server makes one)');
    const path = command.path.replace(/\{(\w+)\}/g, (_, name: string) => encodeURIComponent(String(pathValues[name])));
    const isBody = command.method === 'POST';
    return {
      command,
      path,
      body: isBody ? fieldValues : undefined,
      query: isBody ? undefined : (fieldValues as Record<string, string | number | boolean>),
      url,
      token,
      json: values.json === true || io.stdoutIsTTY !== true,
      async,
      webhookUrl,
    };
  } catch (err) {
    if (err instanceof UsageError && err.usage === undefined) throw new UsageError(err.message, usage);
    throw err;
  }
}

function print(io: CliIo, req: Request, data: unknown, message: string, touch: Touch | undefined): void {
  if (req.json) {
    io.stdout(typeof data === 'string' ? data : JSON.stringify(data, null, 2) + '\n');
    return;
  }
  // A job's result reads as its endpoint's answer does.
  const endpoint = typeof data === 'object' && data !== null && 'result' in data && 'endpoint' in data ? String(data.endpoint) : undefined;
  const text = typeof data === 'string' ? data : render(data, touch ?? (endpoint === undefined ? undefined : TOUCHES[endpoint]));
  io.stdout(text.endsWith('\n') ? text : text + '\n');
  // A tool's message sums its answer up ("16 ports of ...: 2 open, 14 closed"); the others' say little.
  if (message && req.command.operation) io.stderr(`${message}\n`);
}

async function runJob(client: NetdiagClient, io: CliIo, req: Request, touch: Touch | undefined): Promise<number> {
  const job = await client.submit(req.path, req.body ?? {}, req.webhookUrl === undefined ? {} : { webhookUrl: req.webhookUrl });
  io.stderr(`netdiag: job ${job.id} ${job.status} (netdiag jobs get ${job.id})\n`);
  const progress = new Progress(io, job.progress.total);
  let finished = job;
  try {
    for await (const event of client.stream(job.id)) {
      if (event.type === 'job') {
        finished = event.job;
        break;
      }
      const line = itemLine(event.item, touch);
      progress.item(line, () => (req.json ? io.stderr : io.stdout)(`${line}\n`));
    }
    if (!FINISHED_STATUSES.has(finished.status as JobStatus)) finished = await client.wait(job.id);
  } finally {
    // An error ends the stream too: its message goes on a line of its own, not after the bar.
    progress.done();
  }
  if (finished.status !== 'succeeded') {
    io.stderr(`netdiag: job ${finished.id} ${finished.status}: ${finished.error?.message ?? 'no result'}\n`);
    return EXIT.server;
  }
  print(io, req, finished.result, `job ${finished.id} succeeded`, touch);
  return EXIT.ok;
}

/** Runs one API command; returns the exit code. Usage errors are thrown (UsageError), as the admin commands' are. */
export async function runApi(argv: string[], io: CliIo): Promise<number> {
  const resolved = resolve(argv);
  if ('help' in resolved) {
    io.stdout(resolved.help + '\n');
    return EXIT.ok;
  }
  const req = prepare(resolved.command, resolved.rest, io);
  const client = createClient({ baseUrl: req.url, token: req.token });
  const touch = TOUCHES[req.command.path];
  try {
    if (req.async) return await runJob(client, io, req, touch);
    const init = { ...(req.body !== undefined ? { body: req.body } : {}), ...(req.query !== undefined ? { query: req.query } : {}) };
    const { data, message } = await client.request(req.command.method, req.path, init);
    print(io, req, data, message, touch);
    return EXIT.ok;
  } catch (err) {
    if (err instanceof NetdiagError) {
      const retry = err.headers.get('retry-after');
      io.stderr(`netdiag: ${err.message}${err.status === 429 && retry ? ` (retry after ${retry} s)` : ''}\n`);
      return EXIT.server;
    }
    if (err instanceof NetdiagConnectionError) {
      io.stderr(`netdiag: ${err.message}\n`);
      return EXIT.unreachable;
    }
    throw err;
  }
}
