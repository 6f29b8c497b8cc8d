import { parseArgs } from 'node:util';
import { pathToFileURL } from 'node:url';
import { ConfigError, loadConfig } from './config.js';
import { AccountService, NotFound } from './domain/accounts/service.js';
import { PLAN_NAMES } from './domain/accounts/plans.js';
import { AppError } from './errors.js';
import { openStore } from './infra/store/index.js';
import type { Store } from './infra/store/store.js';

export const USAGE = `usage: netdiag <command>

  serve                                                  start the API server
  account create --email E --name N [--plan P]           create an account and its first token
  account set-plan --email E --plan P                    plans: ${PLAN_NAMES.join(', ')}
  account suspend --email E | account resume --email E
  account list
  token create --email E [--label L]                     a new token (shown once)
  token revoke --id ID
  token list --email E                                   never prints secrets

The database is DATABASE_URL (default sqlite:./data/netdiag.db), as for the server.`;

/** Bad arguments or an unknown account: exit code 2. */
class UsageError extends Error {}

export interface CliIo {
  env: Record<string, string | undefined>;
  stdout: (text: string) => void;
  stderr: (text: string) => void;
}

type Flags = Record<string, string | undefined>;

const COMMANDS: Record<string, { flags: string[]; required: string[]; run: (svc: AccountService, f: Flags) => Promise<unknown> }> = {
  'account create': {
    flags: ['email', 'name', 'plan'],
    required: ['email', 'name'],
    run: async (svc, f) => {
      const { account, token } = await svc.createAccount({ email: f.email!, name: f.name!, ...(f.plan ? { plan: f.plan } : {}) });
      return { account: { id: account.id, name: account.name, email: account.email, plan: account.plan }, token };
    },
  },
  'account set-plan': { flags: ['email', 'plan'], required: ['email', 'plan'], run: (svc, f) => svc.setPlan(f.email!, f.plan!) },
  'account suspend': { flags: ['email'], required: ['email'], run: (svc, f) => svc.setStatus(f.email!, 'suspended') },
  'account resume': { flags: ['email'], required: ['email'], run: (svc, f) => svc.setStatus(f.email!, 'active') },
  'account list': { flags: [], required: [], run: (svc) => svc.listAccounts() },
  'token create': {
    flags: ['email', 'label'],
    required: ['email'],
    run: (svc, f) => svc.createToken(f.email!, f.label ?? ''),
  },
  'token revoke': {
    flags: ['id'],
    required: ['id'],
    run: (svc, f) => {
      if (!/^\d+$/.test(f.id!)) throw new UsageError(`--id must be a token id (a positive integer), not "${f.id}"`);
      return svc.revokeToken(Number(f.id));
    },
  },
  'token list': { flags: ['email'], required: ['email'], run: (svc, f) => svc.listTokens(f.email!) },
};

/** Runs one command; returns the exit code. The server (`serve`) keeps running and returns 0. */
export async function runCli(argv: string[], io: CliIo): Promise<number> {
  let store: Store | undefined;
  try {
    const [group, action, ...rest] = argv;
    if (group === 'serve') {
      const { startServer } = await import('./server.js');
      await startServer(loadConfig(io.env));
      return 0;
    }
    if (!group || group === 'help' || group === '--help' || group === '-h') {
      io.stdout(USAGE + '\n');
      return group ? 0 : 2;
    }
    const name = `${group} ${action ?? ''}`.trim();
    const command = COMMANDS[name];
    if (!command) throw new UsageError(`unknown command "${name}"`);
    const options = Object.fromEntries(command.flags.map((f) => [f, { type: 'string' as const }]));
    let values: Flags;
    try {
      values = parseArgs({ args: rest, options, strict: true, allowPositionals: false }).values as Flags;
    } catch (err) {
      throw new UsageError((err as Error).message);
    }
    for (const flag of command.required) {
      if (!values[flag]) throw new UsageError(`${name} needs --${flag}`);
    }
    const config = loadConfig(io.env);
    store = await openStore(config.databaseUrl);
    const result = await command.run(new AccountService(store), values);
    io.stdout(JSON.stringify(result, null, 2) + '\n');
    return 0;
  } catch (err) {
    if (err instanceof UsageError || err instanceof NotFound || err instanceof AppError || err instanceof ConfigError) {
      io.stderr(`netdiag: ${err.message}\n${err instanceof UsageError ? `\n${USAGE}\n` : ''}`);
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
  });
  if (process.argv[2] !== 'serve' || code !== 0) process.exitCode = code;
}
