import path from 'node:path';
import { lint, loadConfig } from '@redocly/openapi-core';
import { projectRoot } from '@parley/platform';

/** The document is valid OpenAPI by a linter that did not produce it (Redocly's recommended rules). */
describe('docs/openapi.json', () => {
  it('has no errors by Redocly lint', async () => {
    const problems = await lint({
      ref: path.join(projectRoot(__dirname), 'docs/openapi.json'),
      config: await loadConfig({}),
    });
    const errors = problems
      .filter((p) => p.severity === 'error')
      .map((p) => `${p.ruleId}: ${p.message} at ${p.location[0]?.pointer}`);
    expect(errors).toEqual([]);
  }, 30_000);
});
