/**
 * `npm run cli -- <command>`:
 *   token --user <id> [--ttl <seconds>]      mint a bearer token from AUTH_JWT_SECRET (the dev secret
 *                                            only with NODE_ENV=development)
 *   projections rebuild                      drop the read models and replay the log into them
 *   books add <file> --user <id> [--title t] [--author a]   ingest a .txt, .md or .pdf
 */
import { parseArgs } from 'node:util';
import { loadBookLimits, loadConfig, loadDatabaseUrl } from '@parley/config';
import { SingleBar, Presets } from 'cli-progress';
import { Pool } from 'pg';
import { EventStore } from '@parley/event-store';
import { rebuildReadModels } from '@parley/read-models';
import { mintToken } from '../apps/api/src/auth/auth.guard';
import { booksAdd } from './cli/books-add';

type Command = (argv: string[]) => Promise<void>;

const commands: Record<string, Command> = {
  async token(argv) {
    const { values } = parseArgs({ args: argv, options: { user: { type: 'string' }, ttl: { type: 'string' } } });
    if (!values.user) throw new UsageError('token needs --user <id>');
    const ttl = values.ttl ? Number(values.ttl) : 24 * 3600;
    if (!Number.isInteger(ttl) || ttl <= 0) throw new UsageError('--ttl takes a positive number of seconds');
    const secret = loadConfig().auth.jwtSecret;
    if (!secret)
      throw new UsageError(
        'token signs with AUTH_JWT_SECRET, which is not set (AUTH_JWKS_URL tokens come from the provider)',
      );
    console.log(mintToken(values.user, secret, ttl));
  },
  async books(argv) {
    const { values, positionals } = parseArgs({
      args: argv,
      allowPositionals: true,
      options: { user: { type: 'string' }, title: { type: 'string' }, author: { type: 'string' } },
    });
    const [sub, file] = positionals;
    if (sub !== 'add' || !file || !values.user)
      throw new UsageError('usage: npm run cli -- books add <file> --user <id>');
    const pool = new Pool({ connectionString: loadDatabaseUrl() });
    try {
      await booksAdd(
        { file, user: values.user, title: values.title, author: values.author },
        { pool, limits: loadBookLimits() },
      );
    } finally {
      await pool.end();
    }
  },
  async projections(argv) {
    if (argv[0] !== 'rebuild') throw new UsageError('usage: npm run cli -- projections rebuild');
    const pool = new Pool({ connectionString: loadDatabaseUrl() });
    const bar = new SingleBar(
      { format: 'rebuilding read models [{bar}] {value}/{total} events' },
      Presets.shades_classic,
    );
    try {
      bar.start(0, 0);
      const { events, ms } = await rebuildReadModels(new EventStore(pool), (applied, total) => {
        bar.setTotal(total);
        bar.update(applied);
      });
      bar.stop();
      console.log(`${events} events in ${(ms / 1000).toFixed(2)} s (${Math.round(events / (ms / 1000))} events/s)`);
    } finally {
      bar.stop();
      await pool.end();
    }
  },
};

class UsageError extends Error {}

async function main(): Promise<void> {
  const [name, ...rest] = process.argv.slice(2);
  const command = name ? commands[name] : undefined;
  if (!command) throw new UsageError(`usage: npm run cli -- <${Object.keys(commands).join('|')}> …`);
  await command(rest);
}

main().catch((e: Error) => {
  console.error(e.message);
  process.exit(e instanceof UsageError ? 2 : 1);
});
