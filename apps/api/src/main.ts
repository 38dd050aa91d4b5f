import 'reflect-metadata';
import { AppConfig, CONFIG } from '@parley/config';
import { createApiApp } from './create-api-app';

async function main(): Promise<void> {
  const app = await createApiApp();
  const { port } = app.get<AppConfig>(CONFIG);
  await app.listen(port, '0.0.0.0');
}

main().catch((e: Error) => {
  console.error(e.message);
  process.exit(1);
});
