import { execFile } from 'node:child_process';
import path from 'node:path';
import { promisify } from 'node:util';
import { projectRoot } from '@parley/platform';

const run = promisify(execFile);

/**
 * The previous release, built (or found built) by scripts/build-previous-release.mjs, which
 * `npm test` also runs before the suites: its root, with `dist/apps/api/src/main.js`,
 * `dist/apps/worker/src/main.js` and `dist/scripts/migrate.js`.
 */
export async function buildPreviousRelease(): Promise<string> {
  const script = path.join(projectRoot(__dirname), 'scripts/build-previous-release.mjs');
  const { stdout } = await run(process.execPath, [script], { maxBuffer: 16 * 1024 * 1024 });
  return stdout.trim();
}
