import { ProblemException } from '../http/problem.exception';
import { jwtVerify } from 'jose';
import { AppConfig, DEV_JWT_SECRET, loadConfig } from '@parley/config';
import type { FastifyRequest } from 'fastify';
import { DevTokenController, isLoopback } from './dev-token.controller';

const BASE = { DATABASE_URL: 'postgres://localhost/parley', REDIS_URL: 'redis://localhost:6379' };
const config = (env: Record<string, string>): AppConfig => loadConfig({ ...BASE, ...env });
const SECRET = 'a-secret-of-enough-length';
/** a request as Fastify hands it over, from a connection at `remoteAddress` */
const from = (remoteAddress: string) => ({ raw: { socket: { remoteAddress } } }) as unknown as FastifyRequest;
const mint = (env: Record<string, string>, caller = '127.0.0.1') =>
  new DevTokenController(config(env)).mint({ userId: 'alice' }, from(caller));

describe('POST /v1/dev/token', () => {
  it('mints a token with the public development secret in development, with no secret nor identity provider set', async () => {
    const minted = await mint({ NODE_ENV: 'development' });
    const { payload } = await jwtVerify(minted.token, new TextEncoder().encode(DEV_JWT_SECRET), {
      algorithms: ['HS256'],
    });
    expect(payload).toMatchObject({ sub: 'alice' });
    expect(payload.exp! - payload.iat!).toBe(24 * 3600);
    expect(minted).toMatchObject({ userId: 'alice', expiresIn: 24 * 3600 });
  });

  it('answers only a caller on this machine: a neighbour on the network gets the 404', async () => {
    for (const neighbour of ['192.168.1.20', '10.0.0.7', '::ffff:192.168.1.20', 'fe80::1'])
      await expect(mint({ NODE_ENV: 'development' }, neighbour)).rejects.toThrow(ProblemException);
    for (const local of ['127.0.0.1', '::1', '::ffff:127.0.0.1'])
      expect((await mint({ NODE_ENV: 'development' }, local)).userId).toBe('alice');
    expect(isLoopback(undefined)).toBe(false);
    expect(isLoopback('127.evil.example')).toBe(false);
  });

  it('listens on loopback in development unless HOST says otherwise, on every interface elsewhere', () => {
    expect(config({ NODE_ENV: 'development' }).host).toBe('127.0.0.1');
    expect(config({ NODE_ENV: 'development', HOST: '0.0.0.0' }).host).toBe('0.0.0.0');
    expect(config({ NODE_ENV: 'production', AUTH_JWT_SECRET: SECRET }).host).toBe('0.0.0.0');
  });

  it.each(['production', 'test'])('is not there (404) with NODE_ENV=%s', async (env) => {
    await expect(mint({ NODE_ENV: env, AUTH_JWT_SECRET: SECRET })).rejects.toThrow(ProblemException);
  });

  it('is not there in development with a real AUTH_JWT_SECRET: it never signs with a secret that opens a real API', async () => {
    await expect(mint({ NODE_ENV: 'development', AUTH_JWT_SECRET: SECRET })).rejects.toThrow(ProblemException);
  });

  it('is not there in development with an identity provider (AUTH_JWKS_URL), secret or not', async () => {
    const jwks = { AUTH_JWKS_URL: 'https://idp.example/.well-known/jwks.json' };
    await expect(mint({ NODE_ENV: 'development', ...jwks })).rejects.toThrow(ProblemException);
    await expect(mint({ NODE_ENV: 'development', ...jwks, AUTH_JWT_SECRET: SECRET })).rejects.toThrow(ProblemException);
  });
});
