import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { projectRoot } from '@parley/platform';

/** What `GET /version` answers: the release (package.json) and the commit it was built from. */
export interface BuildInfo {
  version: string;
  /** The commit the build was made from (scripts/build.mjs writes dist/build-info.json); null when unknown, e.g. built from a tarball without .git. */
  commit: string | null;
}

/** Where the build records its commit, beside the compiled code. */
export const BUILD_INFO_FILE = path.join('dist', 'build-info.json');

/** Reads package.json's version and the build's commit once; a missing or unreadable record is a null commit, never a failure. */
export function readBuildInfo(root = projectRoot(__dirname)): BuildInfo {
  const { version } = JSON.parse(readFileSync(path.join(root, 'package.json'), 'utf8')) as { version: string };
  let commit: string | null = null;
  const file = path.join(root, BUILD_INFO_FILE);
  if (existsSync(file)) {
    try {
      const recorded = (JSON.parse(readFileSync(file, 'utf8')) as { commit?: unknown }).commit;
      if (typeof recorded === 'string' && /^[0-9a-f]{7,40}$/.test(recorded)) commit = recorded;
    } catch {
      // a damaged record: the commit is unknown
    }
  }
  return { version, commit };
}
