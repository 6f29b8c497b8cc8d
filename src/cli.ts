import { parseArgs } from 'node:util';
import { pathToFileURL } from 'node:url';
import { DEFAULTS, loadConfig, publicBaseUrl, type Config } from './config.js';
import { describeDatabase } from './config-summary.js';
import { AccountService } from './domain/accounts/service.js';
import { PLAN_NAMES } from './domain/accounts/plans.js';
import { AppError, ConfigError, UsageError, WorkerConfigError } from './errors.js';
import type { Store } from './domain/store.js';
import type { CliIo } from './cli/io.js';

export type { CliIo };

type Flags = Record<string, string | undefined>;

interface Command {
  /** The command's own usage line, after `netdiag `. */
  usage: string;
  summary: string;
  flags: string[];
  required: string[];
  run: (svc: AccountService, f: Flags, ctx: { store: Store; config: Config }) => Promise<unknown>;
}

const COMMANDS: Record<string, Command> = {
  'account create': {
    usage: 'account create --email E --name N [--plan P]',
    summary: `create an account and its first token (shown once); plans: ${PLAN_NAMES.join(', ')}, default free`,
    flags: ['email', 'name', 'plan'],
    required: ['email', 'name'],
    run: async (svc, f) => {
      const { account, token, tokenId } = await svc.createAccount({ email: f.email!, name: f.name!, ...(f.plan ? { plan: f.plan } : {}) });
      return { account: { id: account.id, name: account.name, email: account.email, plan: account.plan }, token, token_id: tokenId };
    },
  },
  'account set-plan': {
    usage: 'account set-plan --email E --plan P',
    summary: `change an account's plan: ${PLAN_NAMES.join(', ')}`,
    flags: ['email', 'plan'],
    required: ['email', 'plan'],
    run: (svc, f) => svc.setPlan(f.email!, f.plan!),
  },
  'account suspend': {
    usage: 'account suspend --email E',
    summary: "refuse the account's tokens (403) until resumed",
    flags: ['email'],
    required: ['email'],
    // With REDIS_URL the processes running its jobs are told at once, as for a DELETE.
    run: async (_svc, f, { store, config }) => {
      const { cancelsPublished } = await import('./infra/jobs/index.js');
      return cancelsPublished(config, store, (onJobsCancelled) => new AccountService(store, undefined, { onJobsCancelled }).setStatus(f.email!, 'suspended'));
    },
  },
  'account resume': {
    usage: 'account resume --email E',
    summary: 'accept a suspended account again',
    flags: ['email'],
    required: ['email'],
    run: (svc, f) => svc.setStatus(f.email!, 'active'),
  },
  'account reset-password': {
    usage: 'account reset-password --email E',
    summary: 'print a one-time link (valid 24 h) that sets the account\'s password on the dashboard; no mail is sent',
    flags: ['email'],
    required: ['email'],
    run: async (svc, f, { store, config }) => {
      const account = await svc.accountByEmail(f.email!);
      const { LoginService, passwordLinkUrl } = await import('./domain/accounts/logins.js');
      const secret = await new LoginService(store, svc, config.signup).passwordLink(account.id);
      return { email: account.email, link: passwordLinkUrl(publicBaseUrl(config), secret), expires_in_hours: 24 };
    },
  },
  'account list': { usage: 'account list', summary: 'every account', flags: [], required: [], run: (svc) => svc.listAccounts() },
  'token create': {
    usage: 'token create --email E [--label L] [--expires-in-days D]',
    summary: 'a new token for the account (shown once; a lost admin token: --email admin@localhost, or your NETDIAG_ADMIN_EMAIL); it expires after D days, or never',
    flags: ['email', 'label', 'expires-in-days'],
    required: ['email'],
    run: (svc, f) => {
      const days = f['expires-in-days'];
      if (days !== undefined && !/^\d{1,6}$/.test(days)) throw new UsageError(`--expires-in-days must be a whole number of days, not "${days}"`);
      return svc.createToken(f.email!, f.label ?? '', days === undefined ? undefined : Number(days));
    },
  },
  'token revoke': {
    usage: 'token revoke --id ID',
    summary: 'refuse the token (401) from the next request on',
    flags: ['id'],
    required: ['id'],
    run: (svc, f) => {
      if (!/^\d+$/.test(f.id!)) throw new UsageError(`--id must be a token id (a positive integer), not "${f.id}"`);
      return svc.revokeToken(Number(f.id));
    },
  },
  'token list': {
    usage: 'token list --email E',
    summary: "the account's tokens with id, prefix, label and dates; never prints secrets",
    flags: ['email'],
    required: ['email'],
    run: (svc, f) => svc.listTokens(f.email!),
  },
};

type Runner = (argv: string[], io: CliIo) => Promise<number>;

/**
 * Commands that live in their own module, loaded only when run (one line each): the runner gets
 * the words after the command's name and answers its own --help.
 */
const SUBCOMMANDS: Record<string, { summary: string; load: () => Promise<Runner> }> = {
  mcp: { summary: "the API's tools as an MCP server on stdin/stdout, for desktop agents", load: async () => (await import('./mcp/stdio.js')).runMcp },
};

const GROUPS: Record<string, string> = {
  account: 'create, change, suspend and list accounts',
  token: 'create, revoke and list API tokens',
};

const DATABASE_NOTE = `The database is DATABASE_URL, as for the server (default ${DEFAULTS.databaseUrl});
each command says on stderr which database it used. Commands print JSON on stdout.`;

function lines(commands: Command[]): string {
  const width = Math.max(...commands.map((c) => c.usage.length));
  return commands.map((c) => `  netdiag ${c.usage.padEnd(width)}  ${c.summary}`).join('\n');
}

/** The administration commands: run on the server's machine, with its database. */
export const USAGE = `Administration (on the server's machine, with its database; they print JSON):
  netdiag serve${' '.repeat(6)}start the API server (configuration: environment variables, see README)
  netdiag worker${' '.repeat(5)}run jobs and webhook deliveries without an HTTP server (shared PostgreSQL + REDIS_URL)
${Object.entries(SUBCOMMANDS)
  .map(([name, c]) => `  netdiag ${name.padEnd(10)} ${c.summary}`)
  .join('\n')}${Object.keys(SUBCOMMANDS).length ? '\n' : ''}${Object.entries(GROUPS)
  .map(([group, text]) => `  netdiag ${group.padEnd(10)} ${text}`)
  .join('\n')}

${lines(Object.values(COMMANDS))}

Lost the first (admin) token? On the server's machine: netdiag token create --email admin@localhost --label new (or the NETDIAG_ADMIN_EMAIL you set)

${DATABASE_NOTE}`;

/** `netdiag --help`: the API-user commands, then the administration ones. */
async function fullUsage(): Promise<string> {
  const { apiUsage } = await import('./cli/api.js');
  return `usage: netdiag <command> [--help]\n\n${apiUsage()}\n\n${USAGE}`;
}

const SERVE_USAGE = `usage: netdiag serve

Starts the API server (npm start runs it). Its configuration is the environment: PORT, HOST,
DATABASE_URL (default ${DEFAULTS.databaseUrl}), REDIS_URL, LOG_LEVEL, LOG_FORMAT and the
NETDIAG_* variables of the README. The first start on an empty database prints an admin token.`;

const WORKER_USAGE = `usage: netdiag worker

Runs jobs (NETDIAG_WORKERS at once) and sends webhook deliveries, with no HTTP server, from the
database and Redis the API instances use: DATABASE_URL (PostgreSQL to share it between machines)
and REDIS_URL (BullMQ). It says on start which database and Redis it uses. SIGTERM gives the jobs
it is running back to the queue (another worker takes them) and exits.`;

function groupUsage(group: string): string {
  const commands = Object.entries(COMMANDS)
    .filter(([name]) => name.startsWith(`${group} `))
    .map(([, c]) => c);
  return `usage: netdiag ${group} <${commands.map((c) => c.usage.split(' ')[1]).join('|')}> [--help]

${lines(commands)}

${DATABASE_NOTE}`;
}

function commandUsage(command: Command): string {
  return `usage: netdiag ${command.usage}

${command.summary}.

${DATABASE_NOTE}`;
}

const HELP_FLAGS = ['--help', '-h'];

/**
 * The usage text of an administration command when argv asks for help (`--help`, `-h`); null for
 * the whole usage; undefined when argv does not ask, or is another module's command.
 */
function helpFor(argv: string[]): string | null | undefined {
  if (!argv.some((a) => HELP_FLAGS.includes(a))) return undefined;
  const words = argv.filter((a) => !a.startsWith('-'));
  const [group, action] = words;
  if (group === undefined) return null;
  if (group === 'serve') return SERVE_USAGE;
  if (group === 'worker') return WORKER_USAGE;
  const command = COMMANDS[`${group} ${action}`];
  if (command) return commandUsage(command);
  if (group in GROUPS) return groupUsage(group);
  return undefined;
}

/** Runs one command; returns the exit code. The server (`serve`) keeps running and returns 0. */
export async function runCli(argv: string[], io: CliIo): Promise<number> {
  // `netdiag help dns lookup` is `netdiag dns lookup --help`.
  if (argv[0] === 'help') argv = [...argv.slice(1), '--help'];
  let store: Store | undefined;
  try {
    const help = helpFor(argv);
    if (help !== undefined) {
      io.stdout((help ?? (await fullUsage())) + '\n');
      return 0;
    }
    const [group, action, ...rest] = argv;
    const sub = group === undefined ? undefined : SUBCOMMANDS[group];
    if (sub) return await (await sub.load())(argv.slice(1), io);
    if (group === 'serve') {
      // The configuration first: a bad value is reported before the server's modules load.
      const config = loadConfig(io.env);
      const { startServer } = await import('./server.js');
      await startServer(config);
      return 0;
    }
    if (group === 'worker') {
      if (action !== undefined) throw new UsageError(`netdiag worker takes no arguments, not "${action}"`, WORKER_USAGE);
      const config = loadConfig(io.env);
      const { startWorker } = await import('./worker.js');
      try {
        await startWorker(config, (line) => io.stderr(line + '\n'));
      } catch (err) {
        if (err instanceof WorkerConfigError) throw new UsageError(err.message, WORKER_USAGE);
        throw err;
      }
      return 0;
    }
    if (!group) throw new UsageError('a command is needed');
    if (!(group in GROUPS)) {
      const api = await import('./cli/api.js');
      if (api.isApiCommand(argv)) return await api.runApi(argv, io);
      throw new UsageError(`unknown command "${group}"`);
    }
    if (!action) throw new UsageError(`"${group}" needs a subcommand`, groupUsage(group));
    const name = `${group} ${action}`;
    const command = COMMANDS[name];
    if (!command) throw new UsageError(`unknown command "${name}"`, groupUsage(group));
    const options = Object.fromEntries(command.flags.map((f) => [f, { type: 'string' as const }]));
    let values: Flags;
    try {
      values = parseArgs({ args: rest, options, strict: true, allowPositionals: false }).values as Flags;
    } catch (err) {
      throw new UsageError((err as Error).message, commandUsage(command));
    }
    for (const flag of command.required) {
      if (!values[flag]) throw new UsageError(`${name} needs --${flag}`, commandUsage(command));
    }
    const config = loadConfig(io.env);
    // Loaded here, not at the top: the API-user commands and --help need no database driver.
    const { openStore } = await import('./infra/store/index.js');
    store = await openStore(config.databaseUrl);
    io.stderr(`netdiag: database ${describeDatabase(config.databaseUrl)}\n`);
    const result = await command.run(new AccountService(store), values, { store, config });
    io.stdout(JSON.stringify(result, null, 2) + '\n');
    return 0;
  } catch (err) {
    if (err instanceof UsageError || err instanceof AppError || err instanceof ConfigError) {
      io.stderr(`netdiag: ${err.message}\n${err instanceof UsageError ? `\n${err.usage ?? (await fullUsage())}\n` : ''}`);
      return 2;
    }
    io.stderr(`netdiag: ${(err as Error).message}\n`);
    return 1;
  } finally {
    await store?.close();
  }
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) {
  const code = await runCli(process.argv.slice(2), {
    env: process.env,
    stdout: (t) => process.stdout.write(t),
    stderr: (t) => process.stderr.write(t),
    stdoutIsTTY: process.stdout.isTTY === true,
    stderrIsTTY: process.stderr.isTTY === true,
  });
  if ((process.argv[2] !== 'serve' && process.argv[2] !== 'worker') || code !== 0) process.exitCode = code;
}
