/**
 * `npm run cli -- <command>`:
 *   token --user <id> [--ttl <seconds>]      mint a bearer token from the local AUTH_JWT_SECRET
 */
import { parseArgs } from 'node:util';
import { loadConfig } from '@parley/config';
import { mintToken } from '../apps/api/src/auth/auth.guard';

type Command = (argv: string[]) => Promise<void>;

const commands: Record<string, Command> = {
  async token(argv) {
    const { values } = parseArgs({ args: argv, options: { user: { type: 'string' }, ttl: { type: 'string' } } });
    if (!values.user) throw new UsageError('token needs --user <id>');
    const ttl = values.ttl ? Number(values.ttl) : 24 * 3600;
    if (!Number.isInteger(ttl) || ttl <= 0) throw new UsageError('--ttl takes a positive number of seconds');
    console.log(mintToken(values.user, loadConfig().auth.jwtSecret, ttl));
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
