import { INestApplication, ValidationPipe } from '@nestjs/common';
import { json } from 'express';
import { NestFactory } from '@nestjs/core';
import { NestExpressApplication } from '@nestjs/platform-express';
import { DocumentBuilder, OpenAPIObject, SwaggerModule } from '@nestjs/swagger';
import type { SchemaObject } from '@nestjs/swagger/dist/interfaces/open-api-spec.interface';
import { Logger } from 'nestjs-pino';
import { SHUTDOWN_SIGNALS } from '@parley/platform';
import { ApiModule } from './api.module';
import { validationProblem } from './http/validation-problem';
import { mountQueueBoard } from './queue-board/queue-board';
import { EventEnvelopeDto } from './openapi/event-envelope.dto';
import { envelopeSchemas, eventSchemas } from './openapi/event-schemas';

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
  mountQueueBoard(app); // before Nest's routes and its 404; only when QUEUE_BOARD_PATH is set
  app.setGlobalPrefix('v1', {
    exclude: ['healthz', 'readyz', 'metrics', 'problems', 'problems/:code', '/', 'web/:file'],
  });
  app.useGlobalPipes(
    new ValidationPipe({
      whitelist: true,
      forbidNonWhitelisted: true,
      transform: true,
      stopAtFirstError: false,
      exceptionFactory: validationProblem,
    }),
  );
  app.set('trust proxy', true);
  app.enableShutdownHooks(SHUTDOWN_SIGNALS);
  SwaggerModule.setup('docs', app, () => buildOpenApiDocument(app));
  return app;
}

/** The OpenAPI document, built from the controllers' decorators and DTOs (served at /docs-json, kept in docs/openapi.json). */
export function buildOpenApiDocument(app: INestApplication): OpenAPIObject {
  const config = new DocumentBuilder()
    .setTitle('Parley')
    .setDescription('Event-sourced conversations with an agent that reads books. Events stream over SSE.')
    .setVersion('1')
    .setLicense('MIT', 'https://opensource.org/licenses/MIT')
    .addServer('/', 'the server that serves this document')
    .addBearerAuth()
    .addSecurity('access_token', {
      type: 'apiKey',
      in: 'query',
      name: 'access_token',
      description: 'the bearer token as a query parameter, for EventSource clients that cannot set headers',
    })
    .build();
  const document = SwaggerModule.createDocument(app, config, { extraModels: [EventEnvelopeDto] });
  document.components = {
    ...document.components,
    schemas: { ...document.components?.schemas, ...eventSchemas(), ...envelopeSchemas() },
  };
  for (const item of Object.values(document.paths)) {
    for (const method of ['get', 'put', 'post', 'delete', 'patch'] as const) {
      const operation = item[method];
      if (!operation) continue;
      // operations without a security requirement are public: say so, rather than leave it unsaid
      operation.security ??= [];
      // the ValidationPipe refuses unknown body fields (forbidNonWhitelisted): body schemas are closed
      for (const name of referencedSchemas(operation.requestBody)) {
        const schema = document.components?.schemas?.[name] as SchemaObject | undefined;
        if (schema) schema.additionalProperties = false;
      }
    }
  }
  return document;
}

/** The component schema names a request body refers to (directly, or in anyOf/oneOf). */
function referencedSchemas(node: unknown): string[] {
  if (!node || typeof node !== 'object') return [];
  const ref = (node as { $ref?: unknown }).$ref;
  const own = typeof ref === 'string' && ref.startsWith('#/components/schemas/') ? [ref.split('/').pop()!] : [];
  const nested = Object.entries(node)
    .filter(([key]) => key === 'content' || key === 'schema' || key === 'anyOf' || key === 'oneOf' || /\//.test(key))
    .flatMap(([, value]) => (Array.isArray(value) ? value.flatMap(referencedSchemas) : referencedSchemas(value)));
  return [...own, ...nested];
}
