import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { projectRoot } from '@parley/platform';

/** The client's types must be generated from the checked-in document, not edited by hand or left behind. */
describe('the generated client types', () => {
  it('are what openapi-typescript makes of docs/openapi.json: run `npm run openapi` after an API change', () => {
    const root = projectRoot(__dirname);
    const out = path.join(mkdtempSync(path.join(tmpdir(), 'parley-schema-')), 'schema.ts');
    const bin = (name: string) => path.join(root, 'node_modules/.bin', name);
    execFileSync(bin('openapi-typescript'), [path.join(root, 'docs/openapi.json'), '-o', out], { stdio: 'pipe' });
    const formatted = execFileSync(
      bin('prettier'),
      ['--stdin-filepath', path.join(root, 'libs/api-client/src/schema.ts')],
      {
        input: readFileSync(out),
      },
    ).toString();
    expect(formatted).toBe(readFileSync(path.join(root, 'libs/api-client/src/schema.ts'), 'utf8'));
  }, 60_000);
});
