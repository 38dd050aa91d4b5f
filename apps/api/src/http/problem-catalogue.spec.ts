import { readFileSync } from 'node:fs';
import path from 'node:path';
import { projectRoot } from '@parley/platform';
import { PROBLEM_CATALOGUE } from './problem-catalogue';

describe('the problem catalogue', () => {
  const docs = readFileSync(path.join(projectRoot(__dirname), 'docs/errors.md'), 'utf8');

  it.each(Object.entries(PROBLEM_CATALOGUE))('docs/errors.md lists %s with its status', (code, { status }) => {
    expect(docs).toContain(`| \`${code}\` | ${status} |`);
  });

  it('lists no code the API does not have', () => {
    const listed = [...docs.matchAll(/^\| `([a-z_]+)` \| \d{3} \|/gm)].map((m) => m[1]);
    expect(listed.sort()).toEqual(Object.keys(PROBLEM_CATALOGUE).sort());
  });
});
