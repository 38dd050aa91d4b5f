import { INestApplication, ValidationPipe } from '@nestjs/common';
import { json } from 'express';
import { NestFactory } from '@nestjs/core';
import { NestExpressApplication } from '@nestjs/platform-express';
import { DocumentBuilder, OpenAPIObject, SwaggerModule } from '@nestjs/swagger';
import { Logger } from 'nestjs-pino';
import { ApiModule } from './api.module';

export const JSON_BODY_LIMIT = '1mb';

/** Postgres text and jsonb cannot hold U+0000: refuse it while parsing (a 400), before anything is stored. */
function refuseNul(_key: string, value: unknown): unknown {
  if (typeof value === 'string' && value.includes('\u0000'))
    throw new SyntaxError('strings must not contain U+0000 (NUL)');
  return value;
}
/** a 20 MB PDF sent as base64 JSON; multipart uploads are capped at 20 MB by multer */
export const BOOK_JSON_BODY_LIMIT = '28mb';

/** Builds the API app exactly as production runs it (tests use this too). */
export async function createApiApp(): Promise<INestApplication> {
  const app = await NestFactory.create<NestExpressApplication>(ApiModule, { bufferLogs: true, bodyParser: false });
  app.useLogger(app.get(Logger));
  app.use('/v1/books', json({ limit: BOOK_JSON_BODY_LIMIT, reviver: refuseNul }));
  app.useBodyParser('json', { limit: JSON_BODY_LIMIT, reviver: refuseNul });
  app.setGlobalPrefix('v1', { exclude: ['healthz', 'readyz', 'metrics', '/', 'web/:file'] });
  app.useGlobalPipes(
    new ValidationPipe({
      whitelist: true,
      forbidNonWhitelisted: true,
      transform: true,
      stopAtFirstError: false,
    }),
  );
  app.set('trust proxy', true);
  app.enableShutdownHooks();
  SwaggerModule.setup('docs', app, () => buildOpenApiDocument(app));
  return app;
}

/** The OpenAPI document, built from the controllers' decorators and DTOs (served at /docs-json, kept in docs/openapi.json). */
export function buildOpenApiDocument(app: INestApplication): OpenAPIObject {
  const config = new DocumentBuilder()
    .setTitle('Parley')
    .setDescription('Event-sourced conversations with an agent that reads books. Events stream over SSE.')
    .setVersion('1')
    .addBearerAuth()
    .build();
  return SwaggerModule.createDocument(app, config);
}
