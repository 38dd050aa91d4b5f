/**
 * `npm run openapi`: writes the API's OpenAPI document to docs/openapi.json, from the same code that
 * serves /docs-json. The typed client (libs/api-client/src/schema.ts) is generated from that file.
 */
import 'reflect-metadata';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { projectRoot } from '@parley/platform';
import { buildOpenApiDocument, createApiApp } from '../apps/api/src/create-api-app';

async function main(): Promise<void> {
  const app = await createApiApp();
  const file = join(projectRoot(), 'docs', 'openapi.json');
  writeFileSync(file, `${JSON.stringify(buildOpenApiDocument(app), null, 2)}\n`);
  await app.close();
  console.log(`wrote ${file}`);
}

main().catch((e: Error) => {
  console.error(e.stack ?? e.message);
  process.exit(1);
});
