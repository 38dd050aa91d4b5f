#!/usr/bin/env node
// `npm run build`: the server (tsc, incremental, into dist/), the client package (libs/api-client)
// and the web page (dist/web), each skipped when none of its inputs changed since it was last
// built, so a second `npm start` does not wait for a build. dist/ is never removed: a running
// service (`npm start`) keeps its files while `npm test` builds; `rm -rf dist` for a clean build.
// Always records the commit the build is made from in dist/build-info.json (`GET /version`).
import { execFileSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, readdirSync, renameSync, statSync, utimesSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const SKIP_DIRS = new Set(['node_modules', 'dist', '.git', 'client-package']);

/** The files under `entry`, each with its modification time (node_modules, dist and .git left out). */
function filesUnder(entry, into = []) {
  const full = path.join(ROOT, entry);
  if (!existsSync(full)) return into;
  const stat = statSync(full);
  if (!stat.isDirectory()) into.push([entry, stat.mtimeMs]);
  else
    for (const child of readdirSync(full, { withFileTypes: true }))
      if (!SKIP_DIRS.has(child.name)) filesUnder(path.join(entry, child.name), into);
  return into;
}

/** A step's inputs as of now: the newest modification, and which files there are (a deleted or renamed file changes it). */
function inputsOf(step) {
  const files = step.inputs.flatMap((entry) => filesUnder(entry));
  const newest = Math.max(0, ...files.map(([, mtime]) => mtime));
  const listing = createHash('sha256')
    .update(files.map(([name]) => name).join('\n'))
    .digest('hex');
  return { newest, listing };
}

const shared = ['package.json', 'package-lock.json', 'node_modules/.package-lock.json', 'tsconfig.json'];
/** Each step: what it reads, the stamp it leaves in its output, and how it runs. */
const STEPS = [
  {
    name: 'server',
    inputs: [...shared, 'tsconfig.build.json', 'apps', 'libs', 'scripts', 'bench', 'test/support'],
    stamp: 'dist/.built-server',
    run: () => npm('build:server'),
  },
  {
    name: 'client',
    inputs: [...shared, 'libs/api-client/package.json', 'libs/api-client/tsconfig.json', 'libs/api-client/src'],
    stamp: 'libs/api-client/dist/.built',
    run: () => npm('build:client'),
  },
  {
    name: 'web',
    inputs: [...shared, 'apps/web', 'libs/api-client/src', 'scripts/build-web.mjs'],
    stamp: 'dist/web/.built',
    run: () => execFileSync(process.execPath, [path.join(ROOT, 'scripts/build-web.mjs')], { cwd: ROOT, stdio: 'inherit' }),
  },
];

function npm(script) {
  execFileSync('npm', ['run', '-s', script], { cwd: ROOT, stdio: 'inherit' });
}

/** The commit being built: PARLEY_COMMIT (a Docker build without .git), else git's HEAD, else null. */
function commitOf() {
  const given = process.env.PARLEY_COMMIT?.trim();
  if (given) return given;
  try {
    return execFileSync('git', ['-C', ROOT, 'rev-parse', 'HEAD'], {
      encoding: 'utf8',
      stdio: ['ignore', 'pipe', 'ignore'],
    }).trim();
  } catch {
    return null; // no git, or not a clone: GET /version says commit null
  }
}

for (const step of STEPS) {
  const stamp = path.join(ROOT, step.stamp);
  const { newest, listing } = inputsOf(step);
  if (existsSync(stamp) && statSync(stamp).mtimeMs > newest && readFileSync(stamp, 'utf8') === listing) {
    console.log(`build: ${step.name} is up to date`);
    continue;
  }
  const startedAt = new Date();
  step.run();
  mkdirSync(path.dirname(stamp), { recursive: true });
  writeFileSync(stamp, listing);
  // dated when the step began, so a file edited during the build is built the next time
  utimesSync(stamp, startedAt, startedAt);
}

// written whole, then renamed: a running API never reads half of it
const info = path.join(ROOT, 'dist/build-info.json');
mkdirSync(path.dirname(info), { recursive: true });
writeFileSync(`${info}.tmp`, `${JSON.stringify({ commit: commitOf() })}\n`);
renameSync(`${info}.tmp`, info);
