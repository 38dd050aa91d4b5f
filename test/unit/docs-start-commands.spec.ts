import { readFileSync } from 'node:fs';
import path from 'node:path';

const ROOT = path.resolve(__dirname, '../..');
/** The pages a newcomer tries a feature from, each with a command that starts Parley. */
const FIRST_PAGES = ['README.md', 'docs/providers.md', 'docs/cors.md', 'docs/web.md', 'docs/mcp.md', 'docs/cli.md'];

/** The ```sh blocks of a Markdown page. */
const shBlocks = (page: string) => [...page.matchAll(/```sh\n([\s\S]*?)\n```/g)].map((m) => m[1]);

/**
 * A start command that works as pasted: `npm start` (NODE_ENV=development and its public secret),
 * or the API or worker started alone in a block that sets AUTH_JWT_SECRET or NODE_ENV=development.
 * `npm run start:api` alone stops at boot: AUTH_JWT_SECRET is required in production mode.
 */
export function startsWithoutSecret(block: string): boolean {
  const startsAlone = /npm run start:(api|worker)|node (\S+ )*dist\/apps\/(api|worker)\/src\/main\.js/.test(block);
  return startsAlone && !/AUTH_JWT_SECRET=|NODE_ENV=development/.test(block);
}

describe('start commands in the docs', () => {
  it.each(FIRST_PAGES)('%s starts Parley with a command that boots as pasted', (file) => {
    const blocks = shBlocks(readFileSync(path.join(ROOT, file), 'utf8'));
    expect(blocks.filter(startsWithoutSecret)).toEqual([]);
  });

  it('catches the start command that stopped at boot (AUTH_JWT_SECRET required)', () => {
    expect(startsWithoutSecret('export LLM_PROVIDER=openai\nnpm run start:api & npm run start:worker')).toBe(true);
    expect(startsWithoutSecret('CORS_ORIGINS=https://app.example.com npm run start:api')).toBe(true);
    expect(startsWithoutSecret('export LLM_PROVIDER=openai\nnpm start')).toBe(false);
    expect(startsWithoutSecret('export AUTH_JWT_SECRET=$(openssl rand -hex 32)\nnpm run start:api')).toBe(false);
  });
});

describe('the client tarball in the docs', () => {
  it.each(['docs/api.md', 'libs/api-client/README.md'])('%s names no version the package may not have', (file) => {
    const { version } = JSON.parse(readFileSync(path.join(ROOT, 'libs/api-client/package.json'), 'utf8')) as {
      version: string;
    };
    const named = [...readFileSync(path.join(ROOT, file), 'utf8').matchAll(/parley-client-(\d+\.\d+\.\d+)\.tgz/g)];
    expect(named.map((m) => m[1]).filter((v) => v !== version)).toEqual([]);
  });
});
