/**
 * Where the client talks to and as whom: PARLEY_URL and PARLEY_TOKEN, with defaults that make a
 * bare `npm run cli -- chat` work against a local `npm start` (docs/cli.md, "Environment").
 */
import { DEV_JWT_SECRET } from '@parley/config';
import { mintToken } from '../../apps/api/src/auth/mint-token';
import { CliError, EXIT } from './errors';

export const DEFAULT_URL = 'http://127.0.0.1:3000';
export const DEFAULT_USER = 'alice';

export interface Target {
  baseUrl: string;
  token: string;
  /** how the token was obtained, for the 401 message */
  tokenSource: 'PARLEY_TOKEN' | 'AUTH_JWT_SECRET' | 'development secret';
}

const LOOPBACK = new Set(['localhost', '127.0.0.1', '[::1]', '::1']);

/**
 * PARLEY_TOKEN as given; else a token minted for PARLEY_USER (default alice) with
 * AUTH_JWT_SECRET when that is in the environment; else, for a loopback URL only, with the public
 * development secret, which only a server started with NODE_ENV=development (npm start) accepts.
 * That last fallback is safe to try: a server that does not run on the dev secret answers 401,
 * and it is never sent anywhere but this machine.
 */
/** Whether PARLEY_URL (or its default) names this machine. */
export function isLoopback(env: NodeJS.ProcessEnv = process.env): boolean {
  try {
    return LOOPBACK.has(new URL(env.PARLEY_URL || DEFAULT_URL).hostname);
  } catch {
    return false;
  }
}

export async function resolveTarget(env: NodeJS.ProcessEnv = process.env): Promise<Target> {
  const baseUrl = (env.PARLEY_URL || DEFAULT_URL).replace(/\/+$/, '');
  let url: URL;
  try {
    url = new URL(baseUrl);
  } catch {
    throw new CliError(`PARLEY_URL is not a URL: ${baseUrl}`, EXIT.usage);
  }
  if (env.PARLEY_TOKEN) return { baseUrl, token: env.PARLEY_TOKEN.trim(), tokenSource: 'PARLEY_TOKEN' };
  const user = env.PARLEY_USER || DEFAULT_USER;
  if (env.AUTH_JWT_SECRET)
    return { baseUrl, token: await mint(user, env.AUTH_JWT_SECRET), tokenSource: 'AUTH_JWT_SECRET' };
  if (LOOPBACK.has(url.hostname))
    return { baseUrl, token: await mint(user, DEV_JWT_SECRET), tokenSource: 'development secret' };
  throw new CliError(
    `no token for ${baseUrl}: set PARLEY_TOKEN (npm run cli -- token --user <id> mints one where the secret is known)`,
    EXIT.auth,
  );
}

function mint(user: string, secret: string): Promise<string> {
  return mintToken(user, secret, 12 * 3600);
}
