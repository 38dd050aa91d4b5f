#!/usr/bin/env node
// Builds the release this code upgrades from (test/e2e/rolling-upgrade.e2e-spec.ts rolls it to
// this code), as its own checkout would build it: its files from git, its own dependencies (this
// checkout's node_modules when both lockfiles install the same packages, else `npm ci`), then
// `npm run build:server`. Kept in the system's temp folder keyed by commit, so later runs reuse
// it; `npm test` runs it before the suites so its CPU does not compete with them. Prints the root.
import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, rmSync, symlinkSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
/** The release before this code (CHANGELOG.md): its tag, and the commit for a clone without tags. Each release moves it. */
export const PREVIOUS_RELEASE = { version: '0.3.0', tag: 'v0.3.0', commit: '43b03c06706daf23529b9615e54d207d93041789' };

const log = (line) => process.stderr.write(`${line}\n`);
const git = (...args) => execFileSync('git', ['-C', ROOT, ...args], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] });

function resolveCommit() {
  let commit = PREVIOUS_RELEASE.commit;
  try {
    commit = git('rev-parse', '--verify', '--quiet', `${PREVIOUS_RELEASE.tag}^{commit}`).trim() || commit;
  } catch {
    // no such tag in this clone: the recorded commit
  }
  try {
    git('cat-file', '-e', `${commit}^{commit}`);
  } catch {
    let shallow = false;
    try {
      shallow = git('rev-parse', '--is-shallow-repository').trim() === 'true';
    } catch {
      // not a git clone at all: said below
    }
    throw new Error(
      `the rolling-upgrade test builds the previous release, ${PREVIOUS_RELEASE.version} (commit ${commit.slice(0, 12)}), ` +
        `from git, and this ${shallow ? 'shallow clone' : 'checkout'} does not have it. ` +
        (shallow
          ? 'Fetch the history with `git fetch --unshallow` (or clone without --depth), then run npm test again.'
          : 'Fetch the branch with its history (`git fetch --unshallow` in a shallow clone), then run npm test again.'),
    );
  }
  return commit;
}

/** What a checkout's lockfile installs, leaving out the project's own name and version. */
function dependenciesOf(root) {
  const lock = JSON.parse(readFileSync(path.join(root, 'package-lock.json'), 'utf8'));
  const { name: _name, version: _version, ...project } = lock.packages[''];
  return JSON.stringify({ ...lock.packages, '': project });
}

export function buildPreviousRelease() {
  const commit = resolveCommit();
  const root = path.join(os.tmpdir(), `parley-${PREVIOUS_RELEASE.version}-${commit.slice(0, 12)}`);
  if (existsSync(path.join(root, 'dist/apps/api/src/main.js'))) return root;
  rmSync(root, { recursive: true, force: true });
  mkdirSync(root, { recursive: true });
  log(`previous release ${PREVIOUS_RELEASE.tag} (${commit.slice(0, 12)}): files from git`);
  execFileSync('sh', ['-c', `git -C "${ROOT}" archive --format=tar ${commit} | tar -x -C "${root}"`], { stdio: 'inherit' });
  if (dependenciesOf(root) === dependenciesOf(ROOT)) symlinkSync(path.join(ROOT, 'node_modules'), path.join(root, 'node_modules'));
  else {
    log('previous release: npm ci (its lockfile installs other packages)');
    execFileSync('npm', ['ci', '--no-audit', '--no-fund', '--loglevel=error'], { cwd: root, stdio: ['ignore', 'ignore', 'inherit'] });
  }
  log('previous release: npm run build:server');
  execFileSync('npm', ['run', 'build:server'], { cwd: root, stdio: ['ignore', 'ignore', 'inherit'] });
  return root;
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  try {
    process.stdout.write(`${buildPreviousRelease()}\n`);
  } catch (e) {
    // a message to act on, not a stack trace
    process.stderr.write(`${e instanceof Error ? e.message : String(e)}\n`);
    process.exit(1);
  }
}
