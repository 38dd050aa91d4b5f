/**
 * Started on a Node older than package.json's engines, each entry point refuses at once with what
 * to do, before any dependency loads or any connection is tried (no database or Redis here).
 */
import { spawnSync } from 'node:child_process';
import path from 'node:path';
import { projectRoot } from '../../libs/platform/src/project-root';

const ROOT = projectRoot(__dirname);
const PRETEND_OLD_NODE = path.join(ROOT, 'test/support/pretend-old-node.js');

describe('an entry point on a Node older than 24', () => {
  it.each([
    ['the API', 'dist/apps/api/src/main.js'],
    ['the worker', 'dist/apps/worker/src/main.js'],
    ['the CLI', 'dist/scripts/cli.js'],
    ['the migration runner', 'dist/scripts/migrate.js'],
  ])('%s refuses at once and says how to get Node 24', (_name, entry) => {
    const started = Date.now();
    const run = spawnSync(process.execPath, ['--require', PRETEND_OLD_NODE, path.join(ROOT, entry), 'books', 'list'], {
      cwd: ROOT,
      env: {
        PATH: process.env.PATH,
        DATABASE_URL: 'postgres://nobody@127.0.0.1:1/none',
        REDIS_URL: 'redis://127.0.0.1:1',
      },
      encoding: 'utf8',
      timeout: 20_000,
    });
    expect(run.status).toBe(1);
    expect(run.stderr).toBe(
      `Parley needs Node.js 24 or newer; this is Node.js 20.20.2 (${process.execPath}).\n` +
        'Install Node.js 24 with `nvm install 24`, or without root: `npm install --prefix ~/.parley-node node@24` and ' +
        '`export PATH=~/.parley-node/node_modules/.bin:$PATH`; check `node -v`, then run this again.\n',
    );
    expect(run.stdout).toBe('');
    // nothing else loaded: no dependency, no connection attempt (the API alone takes seconds to load)
    expect(Date.now() - started).toBeLessThan(5_000);
  });
});
