/**
 * `npm run cli -- token` as the README and docs/mcp.md use it, from the built dist/scripts/cli.js:
 * after `npm start` it needs no variable; where no secret can be known it says which variable to
 * set, with the configuration exit code (docs/cli.md), never "unexpected error".
 */
import { execFile } from 'node:child_process';
import path from 'node:path';
import { jwtVerify } from 'jose';
import { DEV_JWT_SECRET } from '@parley/config';
import { projectRoot } from '@parley/platform';
import { EXIT } from '../../scripts/cli/errors';

const ROOT = projectRoot();
const CLI = path.join(ROOT, 'dist/scripts/cli.js');

function token(args: string[], env: Record<string, string>): Promise<{ code: number; stdout: string; stderr: string }> {
  const clean = { ...process.env };
  for (const name of ['AUTH_JWT_SECRET', 'AUTH_JWKS_URL', 'NODE_ENV', 'PARLEY_URL', 'PARLEY_TOKEN']) delete clean[name];
  return new Promise((resolve) => {
    execFile(
      process.execPath,
      [CLI, 'token', ...args],
      { cwd: ROOT, env: { ...clean, ...env } },
      (err, stdout, stderr) =>
        resolve({ code: err ? (typeof err.code === 'number' ? err.code : 1) : 0, stdout, stderr }),
    );
  });
}

const subjectOf = async (jwt: string, secret: string) =>
  (await jwtVerify(jwt.trim(), new TextEncoder().encode(secret))).payload.sub;

describe('cli token (e2e)', () => {
  it("mints a development token with no variable set, as the README's `npm run -s cli -- token --user alice` after npm start", async () => {
    const { code, stdout, stderr } = await token(['--user', 'alice'], {});
    expect(code).toBe(EXIT.ok);
    expect(await subjectOf(stdout, DEV_JWT_SECRET)).toBe('alice');
    expect(stderr).toContain('public development secret');
    expect(stderr).toContain('NODE_ENV=development');
  });

  it('signs with AUTH_JWT_SECRET when it is set, saying nothing more', async () => {
    const secret = 'a-production-secret-' + 'y'.repeat(20);
    const { code, stdout, stderr } = await token(['--user', 'bob'], { AUTH_JWT_SECRET: secret });
    expect(code).toBe(EXIT.ok);
    expect(await subjectOf(stdout, secret)).toBe('bob');
    expect(stderr).toBe('');
  });

  it('stops with the configuration exit code, naming AUTH_JWT_SECRET, when no secret can be known', async () => {
    const remote = await token(['--user', 'alice'], { PARLEY_URL: 'https://parley.example.com' });
    expect(remote).toMatchObject({ code: EXIT.config, stdout: '' });
    expect(remote.stderr).toContain('set AUTH_JWT_SECRET');
    expect(remote.stderr).not.toContain('unexpected error');

    const tooShort = await token(['--user', 'alice'], { AUTH_JWT_SECRET: 'short' });
    expect(tooShort.code).toBe(EXIT.config);
    expect(tooShort.stderr).toContain('AUTH_JWT_SECRET');
    expect(tooShort.stderr).not.toContain('unexpected error');
  });
});
