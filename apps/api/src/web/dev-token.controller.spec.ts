import { ProblemException } from '../http/problem.exception';
import jwt from 'jsonwebtoken';
import type { AppConfig } from '@parley/config';
import { DevTokenController } from './dev-token.controller';

const config = (env: string, jwtSecret?: string) => ({ env, auth: { jwtSecret } }) as unknown as AppConfig;
const SECRET = 'a-secret-of-enough-length';

describe('POST /v1/dev/token', () => {
  it('mints a token for the user in development', () => {
    const minted = new DevTokenController(config('development', SECRET)).mint({ userId: 'alice' });
    expect(jwt.verify(minted.token, SECRET, { algorithms: ['HS256'] })).toMatchObject({ sub: 'alice' });
    expect(minted).toMatchObject({ userId: 'alice', expiresIn: 24 * 3600 });
  });

  it.each(['production', 'test'])('is not there (404) with NODE_ENV=%s', (env) => {
    expect(() => new DevTokenController(config(env, SECRET)).mint({ userId: 'alice' })).toThrow(ProblemException);
  });

  it('is not there without an HS256 secret (only an identity provider signs in)', () => {
    expect(() => new DevTokenController(config('development')).mint({ userId: 'alice' })).toThrow(ProblemException);
  });
});
