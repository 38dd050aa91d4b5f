/**
 * `npm run cli -- <command>`; docs/cli.md describes every command, the environment and the exit
 * codes. The client commands (chat, books, conversations, replay) talk only to the HTTP API at
 * PARLEY_URL; `token`, `projections rebuild`, `embeddings reembed` and `erasures replay` are local
 * admin tools (a secret, the database).
 */
// first: refuse a Node.js older than package.json's engines, with what to do
import '../libs/platform/src/supported-node';
import { parseArgs, type ParseArgsConfig } from 'node:util';
import { ConfigError } from '@parley/config';
import { connect, type Api } from './cli/api';
import { CliError, EXIT, UsageError } from './cli/errors';
import { isLoopback, resolveTarget } from './cli/env';

type Options = NonNullable<ParseArgsConfig['options']>;
type Command = (argv: string[]) => Promise<number | void>;

const USAGE = `usage: npm run cli -- <command>
  chat [<bookId>] [--conversation <id>] [--new] [--verbose] [--position <chapter>|all]
  books list [--json] | show <id> [--json] | add <file> [--title t] [--author a] [--catalogue] [--json] | delete <id> [--yes]
  conversations list [--book <id>] [--limit n] [--json] | show <id> [--json] | rename <id> <title> | delete <id>
  replay <conversationId> [--json]
  approve <conversationId> <turnId> <toolCallId> [--deny] [--reason <text>]
  token --user <id> [--ttl <seconds>] [--budget <usd per month>] [--operator] [--publisher] [--tenant <id>]
  projections rebuild
  embeddings reembed
  erasures replay [--json]
  contexts estimate [<bookId>] | contexts add [<bookId>]
client commands take --user <id> to act as that user when no PARLEY_TOKEN is set (docs/cli.md)`;

const APPROVE_USAGE = 'usage: npm run cli -- approve <conversationId> <turnId> <toolCallId> [--deny] [--reason <text>]';

/** Strict parsing: an unknown option or a missing value is a usage error, not a stack trace. */
function parse<O extends Options>(argv: string[], options: O) {
  const config = { args: argv, options: { ...options, user: { type: 'string' as const } }, allowPositionals: true };
  try {
    return parseArgs(config);
  } catch (e) {
    throw new UsageError(`${(e as Error).message}\n${USAGE}`);
  }
}

/** The API as configured by the environment, with --user choosing whom a minted token is for. */
async function api(user: string | boolean | undefined): Promise<Api> {
  return connect(await resolveTarget(typeof user === 'string' ? { ...process.env, PARLEY_USER: user } : process.env));
}

function position(value: string | boolean | undefined): number | null | undefined {
  if (value === undefined || typeof value === 'boolean') return undefined;
  if (value === 'all') return null;
  const n = Number(value);
  if (!Number.isInteger(n) || n < 0) throw new UsageError('--position takes a chapter number, or all');
  return n;
}

const commands: Record<string, Command> = {
  async chat(argv) {
    const { values, positionals } = parse(argv, {
      conversation: { type: 'string', short: 'c' },
      new: { type: 'boolean' },
      verbose: { type: 'boolean', short: 'v' },
      position: { type: 'string' },
    });
    if (positionals.length > 1) throw new UsageError(USAGE);
    if (values.conversation && (positionals[0] || values.new))
      throw new UsageError('chat takes either --conversation <id> or a book (with --new)');
    const { chat } = await import('./cli/chat');
    const { openTerminal } = await import('./cli/terminal');
    const term = openTerminal();
    try {
      return await chat(await api(values.user), term, {
        bookId: positionals[0],
        conversationId: values.conversation as string | undefined,
        new: Boolean(values.new),
        verbose: Boolean(values.verbose),
        position: position(values.position),
      });
    } finally {
      term.close();
    }
  },

  async books(argv) {
    const { values, positionals } = parse(argv, {
      json: { type: 'boolean' },
      title: { type: 'string' },
      author: { type: 'string' },
      catalogue: { type: 'boolean' },
      yes: { type: 'boolean', short: 'y' },
    });
    const [sub, arg] = positionals;
    const json = Boolean(values.json);
    const books = await import('./cli/books');
    if (sub === 'list') return books.booksList(await api(values.user), json);
    if (sub === 'show' && arg) return books.booksShow(await api(values.user), arg, json);
    if (sub === 'add' && arg) {
      const [title, author] = [values.title, values.author] as Array<string | undefined>;
      return books.booksAdd(await api(values.user), { file: arg, title, author, json, catalogue: values.catalogue });
    }
    if (sub === 'delete' && arg) {
      const { openTerminal } = await import('./cli/terminal');
      const term = process.stdin.isTTY ? openTerminal() : undefined;
      try {
        return await books.booksDelete(await api(values.user), term, arg, Boolean(values.yes));
      } finally {
        term?.close();
      }
    }
    throw new UsageError(USAGE);
  },

  async conversations(argv) {
    const { values, positionals } = parse(argv, {
      json: { type: 'boolean' },
      book: { type: 'string' },
      limit: { type: 'string' },
    });
    const [sub, id, ...rest] = positionals;
    const json = Boolean(values.json);
    const c = await import('./cli/conversations');
    if (sub === 'list') {
      const limit = values.limit === undefined ? 20 : Number(values.limit);
      if (!Number.isInteger(limit) || limit < 1 || limit > 100) throw new UsageError('--limit takes 1..100');
      return c.conversationsList(await api(values.user), { bookId: values.book as string | undefined, limit, json });
    }
    if (sub === 'show' && id) return c.conversationsShow(await api(values.user), id, json);
    if (sub === 'rename' && id && rest.length) return c.conversationsRename(await api(values.user), id, rest.join(' '));
    if (sub === 'delete' && id) return c.conversationsDelete(await api(values.user), id);
    throw new UsageError(USAGE);
  },

  async approve(argv) {
    const { values, positionals } = parse(argv, { deny: { type: 'boolean' }, reason: { type: 'string' } });
    const [conversationId, turnId, toolCallId] = positionals;
    if (positionals.length !== 3) throw new UsageError(APPROVE_USAGE);
    const { decideApproval } = await import('./cli/resources');
    const approved = !values.deny;
    const reason = typeof values.reason === 'string' ? values.reason : undefined;
    await decideApproval(await api(values.user), conversationId, turnId, {
      toolCallId,
      approved,
      ...(reason ? { reason } : {}),
    });
    console.log(`${approved ? 'approved' : 'declined'} call ${toolCallId}: the turn goes on`);
    return EXIT.ok;
  },

  async replay(argv) {
    const { values, positionals } = parse(argv, { json: { type: 'boolean' } });
    if (positionals.length !== 1) throw new UsageError('usage: npm run cli -- replay <conversationId> [--json]');
    const { replay } = await import('./cli/replay');
    return replay(await api(values.user), positionals[0], Boolean(values.json));
  },

  async token(argv) {
    const { values } = parse(argv, {
      ttl: { type: 'string' },
      budget: { type: 'string' },
      operator: { type: 'boolean' },
      publisher: { type: 'boolean' },
      admin: { type: 'boolean' },
      tenant: { type: 'string' },
    });
    if (!values.user) throw new UsageError('token needs --user <id>');
    const ttl = values.ttl ? Number(values.ttl) : 24 * 3600;
    if (!Number.isInteger(ttl) || ttl <= 0) throw new UsageError('--ttl takes a positive number of seconds');
    const budget = values.budget === undefined ? undefined : Number(values.budget);
    if (budget !== undefined && !(Number.isFinite(budget) && budget >= 0))
      throw new UsageError('--budget takes US dollars per month, 0 or more');
    const { mintToken } = await import('../apps/api/src/auth/auth.guard');
    const { BUDGET_CLAIM } = await import('../apps/api/src/auth/budget-claim');
    const { ADMIN_ROLE, OPERATOR_ROLE, PUBLISHER_ROLE, ROLES_CLAIM } = await import('../apps/api/src/auth/roles-claim');
    const { TENANT_CLAIM } = await import('../apps/api/src/auth/tenant-claim');
    const roles = [
      ...(values.operator ? [OPERATOR_ROLE] : []),
      ...(values.publisher ? [PUBLISHER_ROLE] : []),
      ...(values.admin ? [ADMIN_ROLE] : []),
    ];
    const secret = await tokenSecret();
    const claims = {
      ...(budget === undefined ? {} : { [BUDGET_CLAIM]: budget }),
      ...(roles.length ? { [ROLES_CLAIM]: roles } : {}),
      ...(typeof values.tenant === 'string' ? { [TENANT_CLAIM]: values.tenant } : {}),
    };
    console.log(await mintToken(values.user as string, secret, ttl, claims));
  },

  /** Admin, on the database of DATABASE_URL (not the API): rebuilds the read models from the log. */
  async projections(argv) {
    if (argv[0] !== 'rebuild') throw new UsageError('usage: npm run cli -- projections rebuild');
    const { rebuildProjections } = await import('./cli/projections-rebuild');
    await rebuildProjections();
  },
  async embeddings(argv) {
    if (argv[0] !== 'reembed') throw new UsageError('usage: npm run cli -- embeddings reembed');
    const { reembedBooks } = await import('./cli/embeddings-reembed');
    return reembedBooks();
  },
  /** Admin, on the database and the erasure journal: erases again what a restore brought back. */
  async erasures(argv) {
    const { values, positionals } = parse(argv, { json: { type: 'boolean' } });
    if (positionals.length !== 1 || positionals[0] !== 'replay')
      throw new UsageError('usage: npm run cli -- erasures replay [--json]');
    const { replayErasures } = await import('./cli/erasures-replay');
    return replayErasures(Boolean(values.json));
  },
  /** Admin, on the database: contextual retrieval's cost estimate, or the contexts themselves. */
  async contexts(argv) {
    const [action, bookId, ...rest] = argv;
    if ((action !== 'estimate' && action !== 'add') || rest.length)
      throw new UsageError('usage: npm run cli -- contexts estimate|add [<bookId>]');
    const { contexts } = await import('./cli/contexts');
    return contexts(action, bookId);
  },
};

/**
 * The secret `token` signs with: the server's configuration (AUTH_JWT_SECRET, or the development
 * secret under NODE_ENV=development); with neither set and PARLEY_URL on this machine, the public
 * development secret that `npm start` accepts, said on stderr. Anything else is a configuration
 * error (exit code 8), never a bug.
 */
async function tokenSecret(env = process.env): Promise<string> {
  const { DEV_JWT_SECRET, loadConfig } = await import('@parley/config');
  if (!env.AUTH_JWT_SECRET && !env.AUTH_JWKS_URL && env.NODE_ENV !== 'development') {
    if (!isLoopback(env))
      throw new CliError(
        `token: no secret to sign with for ${env.PARLEY_URL}: set AUTH_JWT_SECRET to the secret that server runs with ` +
          '(a server signing in with an identity provider, AUTH_JWKS_URL, takes its tokens from the provider)',
        EXIT.config,
      );
    console.error(
      'token: AUTH_JWT_SECRET is not set, so this token is signed with the public development secret: ' +
        'only a server started with NODE_ENV=development (npm start) accepts it',
    );
    return DEV_JWT_SECRET;
  }
  let secret: string | undefined;
  try {
    secret = loadConfig(env).auth.jwtSecret;
  } catch (e) {
    if (e instanceof ConfigError) throw new CliError(`token: ${e.message}`, EXIT.config);
    throw e;
  }
  if (!secret)
    throw new CliError(
      'token signs with AUTH_JWT_SECRET, which is not set (with AUTH_JWKS_URL, tokens come from the identity provider)',
      EXIT.config,
    );
  return secret;
}

async function main(): Promise<number> {
  const [name, ...rest] = process.argv.slice(2);
  if (name === 'help' || name === '--help' || name === '-h') {
    console.log(USAGE);
    return EXIT.ok;
  }
  const command = name ? commands[name] : undefined;
  if (!command) throw new UsageError(USAGE);
  return (await command(rest)) ?? EXIT.ok;
}

main()
  .then((code) => process.exit(code)) // also ends a stream or a keyboard still holding the loop open
  .catch((e: unknown) => {
    if (e instanceof CliError || e instanceof ConfigError) console.error(e.message);
    else if (process.env.PARLEY_DEBUG) console.error(e);
    else console.error(`unexpected error: ${e instanceof Error ? e.message : String(e)} (PARLEY_DEBUG=1 shows more)`);
    process.exit(e instanceof CliError ? e.exitCode : e instanceof ConfigError ? EXIT.config : EXIT.unexpected);
  });
