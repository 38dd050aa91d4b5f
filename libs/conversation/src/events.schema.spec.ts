import { readFileSync } from 'node:fs';
import path from 'node:path';
import { createGenerator } from 'ts-json-schema-generator';
import { projectRoot } from '@parley/platform';

/** events.schema.json (served in the OpenAPI document) must be what events.ts says today. */
describe('events.schema.json', () => {
  it('is generated from the typed event contract: run `npm run openapi` after changing events.ts', () => {
    const root = projectRoot(__dirname);
    const generated = createGenerator({
      path: path.join(root, 'libs/conversation/src/events.ts'),
      tsconfig: path.join(root, 'tsconfig.json'),
      type: 'ConversationEvent',
      skipTypeCheck: true,
    }).createSchema('ConversationEvent');
    const stored = JSON.parse(readFileSync(path.join(root, 'libs/conversation/src/events.schema.json'), 'utf8'));
    expect(stored).toEqual(JSON.parse(JSON.stringify(generated)));
  }, 30_000);
});
