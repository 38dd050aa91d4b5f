import { readFileSync } from 'node:fs';
import path from 'node:path';
import { ENV_VARIABLES } from '../../libs/config/src/env';

const ROOT = path.resolve(__dirname, '../..');
const read = (file: string) => readFileSync(path.join(ROOT, file), 'utf8');
/** What docker-compose.yml sets itself rather than pass through. */
const OWN = ['NODE_ENV', 'PORT', 'HOST', 'METRICS_PORT', 'WORKER_METRICS_PORT'];

/** The top-level block of one service in docker-compose.yml, as text. */
function service(compose: string, name: string): string {
  const start = compose.indexOf(`\n  ${name}:\n`);
  if (start < 0) throw new Error(`docker-compose.yml has no ${name} service`);
  const next = compose.slice(start + 1).search(/\n {2}[a-z-]+:\n|\n[a-z]/);
  return compose.slice(start, next < 0 ? undefined : start + 1 + next);
}

describe('docker-compose.yml, a compose file a team can run', () => {
  const compose = read('docker-compose.yml');
  const example = read('.env.example');

  it('passes every setting of the environment schema through from .env', () => {
    const missing = ENV_VARIABLES.filter((v) => !OWN.includes(v) && !compose.includes(`${v}: \${${v}:`));
    expect(missing).toEqual([]);
  });

  it('has .env.example list every variable of the environment schema', () => {
    const listed = new Set([...example.matchAll(/^#? ?([A-Z][A-Z0-9_]+)[=:]/gm)].map((m) => m[1]));
    expect(ENV_VARIABLES.filter((v) => !listed.has(v))).toEqual([]);
    expect(example).toMatch(/^AUTH_JWT_SECRET=$/m);
  });

  it('restarts what stops, and scales the API and the worker (no fixed host port on either)', () => {
    for (const name of ['postgres', 'redis', 'proxy'])
      expect(service(compose, name)).toContain('restart: unless-stopped');
    expect(compose).toMatch(/^x-app: &app\n(.*\n)*? {2}restart: unless-stopped$/m);
    for (const name of ['api', 'worker']) expect(service(compose, name)).not.toMatch(/^\s+ports:/m);
    expect(service(compose, 'proxy')).toMatch(/ports: \["\$\{PARLEY_PORT:-3000\}:80"\]/);
    expect(read('deploy/nginx/parley.conf')).toContain('proxy_buffering off');
  });

  it('says how to get a token in production mode', () => {
    expect(compose).toContain('docker compose exec api node dist/scripts/cli.js token --user');
    expect(read('docs/development.md')).toContain('docker compose exec api node dist/scripts/cli.js token --user');
  });
});
