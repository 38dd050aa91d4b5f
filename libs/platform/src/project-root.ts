import { existsSync } from 'node:fs';
import path from 'node:path';

/** The repository root (holding migrations/ and prompts/), from source under ts or from dist/. */
export function projectRoot(from = __dirname): string {
  let dir = from;
  while (!existsSync(path.join(dir, 'package.json')) || !existsSync(path.join(dir, 'migrations'))) {
    const up = path.dirname(dir);
    if (up === dir) throw new Error(`no project root above ${from}`);
    dir = up;
  }
  return dir;
}
