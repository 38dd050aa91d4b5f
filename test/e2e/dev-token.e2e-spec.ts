/**
 * The development token endpoint on the built API (issue 39): it signs only with the public
 * development secret, so it answers where that secret is the one in use (NODE_ENV=development,
 * as `npm start` runs, with no AUTH_JWT_SECRET nor AUTH_JWKS_URL) and is a 404 wherever a real
 * secret signs the API's tokens, even in development.
 */
import { readFileSync } from 'node:fs';
import { jwtVerify } from 'jose';
import { DEV_JWT_SECRET } from '@parley/config';
import { startStack, TEST_JWT_SECRET, type Stack } from '../support/stack';

const mint = (base: string, userId: string) =>
  fetch(`${base}/v1/dev/token`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ userId }),
  });

/** The local addresses listening on `port`, from the kernel's own tables (no traffic sent anywhere). */
function listeningOn(port: number): string[] {
  const hex = port.toString(16).toUpperCase().padStart(4, '0');
  return ['/proc/net/tcp', '/proc/net/tcp6'].flatMap((table) =>
    readFileSync(table, 'utf8')
      .split('\n')
      .slice(1)
      .map((line) => line.trim().split(/\s+/))
      // st 0A: LISTEN
      .filter((cols) => cols[1]?.endsWith(`:${hex}`) && cols[3] === '0A')
      .map((cols) => cols[1].split(':')[0]),
  );
}

describe('development token (e2e)', () => {
  describe('in development with a real AUTH_JWT_SECRET', () => {
    let stack: Stack;
    beforeAll(async () => {
      stack = await startStack({ workers: 0, env: { NODE_ENV: 'development', AUTH_JWT_SECRET: TEST_JWT_SECRET } });
    }, 60_000);
    afterAll(() => stack?.stop());

    it('answers 404 and mints nothing, for anyone', async () => {
      for (const userId of ['alice', 'someone-else']) {
        const res = await mint(stack.base, userId);
        expect(res.status).toBe(404);
        const body = (await res.json()) as Record<string, unknown>;
        expect(body).toMatchObject({ code: 'not_found' });
        expect(body.token).toBeUndefined();
      }
    });
  });

  describe('as npm start runs it (development, no secret: the development secret)', () => {
    let stack: Stack;
    beforeAll(async () => {
      stack = await startStack({ workers: 0, env: { NODE_ENV: 'development', AUTH_JWT_SECRET: '' } });
    }, 60_000);
    afterAll(() => stack?.stop());

    it('listens on loopback only (HOST unset in development): no neighbour reaches the public secret', () => {
      const port = Number(new URL(stack.base).port);
      // 0100007F: 127.0.0.1 as /proc/net/tcp writes it
      expect(listeningOn(port)).toEqual(['0100007F']);
    });

    it('mints a 24-hour token signed with the development secret, which the API takes', async () => {
      const res = await mint(stack.base, 'alice');
      expect(res.status).toBe(201);
      const { token } = (await res.json()) as { token: string };
      const key = (secret: string) => new TextEncoder().encode(secret);
      const { payload } = await jwtVerify(token, key(DEV_JWT_SECRET), { algorithms: ['HS256'] });
      expect(payload).toMatchObject({ sub: 'alice' });
      await expect(jwtVerify(token, key(TEST_JWT_SECRET))).rejects.toThrow();
      const books = await fetch(`${stack.base}/v1/books`, { headers: { authorization: `Bearer ${token}` } });
      expect(books.status).toBe(200);
    });
  });
});
