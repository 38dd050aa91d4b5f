import { execFile } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, rmSync, symlinkSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { projectRoot } from '@parley/platform';

const run = promisify(execFile);
const ROOT = projectRoot(__dirname);

/**
 * The release this code upgrades from (CHANGELOG.md): its tag, and the commit the tag names, for
 * a clone that fetched no tags. Each release moves this to the one before it.
 */
export const PREVIOUS_RELEASE = { version: '0.1.0', tag: 'v0.1.0', commit: 'bde6f812791422ea589cde3044a040f7296fe3d2' };

/**
 * The previous release, built as its own checkout would build it: its files from git, its own
 * dependencies (this checkout's when the lockfiles are the same, else `npm ci`), `npm run
 * build:server`. Kept in the system's temp folder, keyed by commit, so a second run reuses it.
 * Returns its root: `dist/apps/api/src/main.js`, `dist/apps/worker/src/main.js`,
 * `dist/scripts/migrate.js` are there.
 */
export async function buildPreviousRelease(log: (line: string) => void = () => undefined): Promise<string> {
  const commit = await resolveCommit();
  const root = path.join(os.tmpdir(), `parley-${PREVIOUS_RELEASE.version}-${commit.slice(0, 12)}`);
  if (existsSync(path.join(root, 'dist/apps/api/src/main.js'))) return root;
  rmSync(root, { recursive: true, force: true });
  mkdirSync(root, { recursive: true });
  log(`previous release ${PREVIOUS_RELEASE.tag} (${commit.slice(0, 12)}): files from git`);
  await run('sh', ['-c', `git -C "${ROOT}" archive --format=tar ${commit} | tar -x -C "${root}"`], {
    maxBuffer: 64 * 1024 * 1024,
  });
  const sameLock = dependenciesOf(root) === dependenciesOf(ROOT);
  if (sameLock) symlinkSync(path.join(ROOT, 'node_modules'), path.join(root, 'node_modules'));
  else {
    log('previous release: npm ci (its lockfile differs)');
    await run('npm', ['ci', '--no-audit', '--no-fund', '--loglevel=error'], { cwd: root, maxBuffer: 64 * 1024 * 1024 });
  }
  log('previous release: npm run build:server');
  await run('npm', ['run', 'build:server'], { cwd: root, maxBuffer: 64 * 1024 * 1024 });
  return root;
}

/** The tag's commit, or the recorded one when this clone has no tags (CI clones main alone). */
async function resolveCommit(): Promise<string> {
  const tagged = await run('git', [
    '-C',
    ROOT,
    'rev-parse',
    '--verify',
    '--quiet',
    `${PREVIOUS_RELEASE.tag}^{commit}`,
  ]).catch(() => undefined);
  const commit = tagged?.stdout.trim() || PREVIOUS_RELEASE.commit;
  await run('git', ['-C', ROOT, 'cat-file', '-e', `${commit}^{commit}`]).catch(() => {
    throw new Error(
      `the previous release's commit ${commit} is not in this clone: fetch its history (git fetch --unshallow)`,
    );
  });
  return commit;
}

/** What a checkout's lockfile installs, leaving out the project's own name and version. */
function dependenciesOf(root: string): string {
  const lock = JSON.parse(readFileSync(path.join(root, 'package-lock.json'), 'utf8'));
  const { name: _name, version: _version, ...project } = lock.packages[''];
  return JSON.stringify({ ...lock.packages, '': project });
}
