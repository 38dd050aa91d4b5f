import fastifyMultipart from '@fastify/multipart';
import send from '@fastify/send';
import { BadRequestException, INestApplication, Logger as NestLogger, ValidationPipe } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { FastifyAdapter, NestFastifyApplication } from '@nestjs/platform-fastify';
import { DocumentBuilder, OpenAPIObject, SwaggerModule } from '@nestjs/swagger';
import type { SchemaObject } from '@nestjs/swagger/dist/interfaces/open-api-spec.interface';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { Logger } from 'nestjs-pino';
import { AppConfig, CONFIG, loadTrustProxy } from '@parley/config';
import { SHUTDOWN_SIGNALS } from '@parley/platform';
import { ApiModule } from './api.module';
import { authenticateBeforeBody } from './auth/auth-before-body';
import { PROTECTED_RESOURCE_PATH } from './auth/protected-resource';
import { addBodyHeaders } from './http/body-headers';
import { enableCors } from './http/cors';
import { sendProblem } from './http/http-exception.filter';
import { readJsonBody } from './http/json-body';
import { answerUnknownMethods } from './http/method-not-allowed';
import { validationProblem } from './http/validation-problem';
import { timeRequests } from './metrics/http-metrics';
import { MetricsService } from './metrics/metrics.service';
import { mountQueueBoard } from './queue-board/queue-board';
import { mountMcp } from './mcp/mcp-endpoint';
import { applyBodiesByMediaType } from './openapi/api-body-by-media-type';
import { EventEnvelopeDto } from './openapi/event-envelope.dto';
import { envelopeSchemas, eventSchemas, streamFrameSchemas } from './openapi/event-schemas';

/** bytes of a JSON body (1 MiB) */
export const JSON_BODY_LIMIT = 1024 * 1024;
/** a 20 MB PDF sent as base64 JSON; multipart uploads are capped at 20 MB by the upload interceptor */
export const BOOK_JSON_BODY_LIMIT = 28 * 1024 * 1024;

/** Builds the API app exactly as production runs it (tests use this too). */
export async function createApiApp(): Promise<NestFastifyApplication> {
  const adapter = new FastifyAdapter({
    // X-Forwarded-For/-Proto/-Host count only from the peers TRUST_PROXY names (unset: none), so a
    // client cannot choose its req.ip or make plain HTTP look like TLS
    trustProxy: loadTrustProxy(),
    // routes match as they always have: any case, with or without a trailing slash, ids of any length
    routerOptions: { caseSensitive: false, ignoreTrailingSlash: true, maxParamLength: 16 * 1024 },
    // a request that arrives while the server drains is still served
    return503OnClosing: false,
    // Node's own limit on receiving a whole request, which Fastify would otherwise lift
    requestTimeout: 300_000,
    frameworkErrors: (error: Error, _req: FastifyRequest, reply: FastifyReply) =>
      sendProblem(reply, undecodable(error), new NestLogger('http')),
  });
  send.mime.define({ 'text/javascript': ['js', 'mjs'] }, true); // scripts are served as text/javascript (RFC 9239)
  const app = await NestFactory.create<NestFastifyApplication>(ApiModule, adapter, {
    bufferLogs: true,
    bodyParser: false,
  });
  app.useLogger(app.get(Logger));
  const http = app.getHttpAdapter().getInstance();
  http.server.removeAllListeners('clientError'); // malformed HTTP is answered by Node itself, as before
  timeRequests(http, app.get(MetricsService)); // first: every answer is counted, those refused before the body too
  await enableCors(app, app.get<AppConfig>(CONFIG).cors); // before auth: a 401 carries CORS headers, a preflight needs no token
  authenticateBeforeBody(app); // first: a request without a valid token is answered before its body is read
  parseBodies(http);
  closeOnUnreadBody(http);
  addBodyHeaders(http);
  answerUnknownMethods(http); // before the routes: 405 with Allow for a known path, 404 for an unknown one
  mountQueueBoard(app); // only when QUEUE_BOARD_PATH is set
  mountMcp(app); // /mcp, unless MCP_ENABLED=false
  app.setGlobalPrefix('v1', {
    exclude: [
      'healthz',
      'readyz',
      'version',
      'problems',
      'problems/:code',
      '/',
      'web/:file',
      PROTECTED_RESOURCE_PATH.slice(1),
    ],
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
  app.enableShutdownHooks(SHUTDOWN_SIGNALS);
  SwaggerModule.setup('docs', app, () => buildOpenApiDocument(app));
  return app;
}

/**
 * JSON bodies (up to JSON_BODY_LIMIT, BOOK_JSON_BODY_LIMIT for a book's upload alone) and multipart uploads
 * (read by the route that takes them); any other body is left unread, as it always was, and so is
 * the body of a request to no route (its answer is a 404 whatever it holds).
 */
function parseBodies(http: FastifyInstance): void {
  http.removeAllContentTypeParsers();
  http.addContentTypeParser('application/json', (req, payload, done) => {
    if (req.is404) return done(null);
    readJsonBody(payload, isBookUpload(req) ? BOOK_JSON_BODY_LIMIT : JSON_BODY_LIMIT, done);
  });
  http.addContentTypeParser('*', (_req, _payload, done) => done(null));
  void http.register(fastifyMultipart);
}

/**
 * An answer sent while the request's body is still arriving (a 413, a 401 from the headers, a
 * refused upload, a 404) says `Connection: close`, and Node closes the connection once the answer is
 * out, instead of reading off the rest of a body that may be declared at any length. A request
 * whose body was read whole keeps its connection (Fastify asks to close after any refused body).
 */
function closeOnUnreadBody(http: FastifyInstance): void {
  http.addHook('onSend', (req, reply, payload, done) => {
    if (!req.raw.complete) reply.header('connection', 'close');
    else if (reply.getHeader('connection') === 'close') reply.removeHeader('connection');
    done(null, payload);
  });
}

/** A path Fastify cannot decode (FST_ERR_BAD_URL): the 400 it has always been, naming the segment. */
function undecodable(error: Error): Error {
  const path = /'(.*)' is not a valid url component/.exec(error.message)?.[1];
  if (!path) return error;
  const segment = path.split('/').find((s) => {
    try {
      decodeURIComponent(s);
      return false;
    } catch {
      return true;
    }
  });
  return new BadRequestException(`Failed to decode param '${segment ?? path}'`);
}

/** `url` is `base` or below it (case-insensitive, as routes match). */
/** POST /v1/books, the one route whose JSON body may hold a whole book (as routed: any spelling of the path). */
function isBookUpload(req: FastifyRequest): boolean {
  return req.method === 'POST' && req.routeOptions.url?.toLowerCase() === '/v1/books';
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
    schemas: { ...document.components?.schemas, ...eventSchemas(), ...envelopeSchemas(), ...streamFrameSchemas() },
  };
  applyBodiesByMediaType(document);
  for (const item of Object.values(document.paths)) {
    for (const method of ['get', 'put', 'post', 'delete', 'patch'] as const) {
      const operation = item[method];
      if (!operation) continue;
      // operations without a security requirement are public: say so, rather than leave it unsaid
      operation.security ??= [];
      // the ValidationPipe refuses unknown body fields (forbidNonWhitelisted), nested ones too (policy):
      // body schemas, and the schemas their properties refer to, are closed
      const pending = referencedSchemas(operation.requestBody);
      const closed = new Set<string>();
      for (let name = pending.pop(); name !== undefined; name = pending.pop()) {
        const schema = document.components?.schemas?.[name] as SchemaObject | undefined;
        if (!schema || closed.has(name)) continue;
        closed.add(name);
        schema.additionalProperties = false;
        pending.push(...Object.values(schema.properties ?? {}).flatMap(referencedSchemas));
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
    .filter(([key]) => ['content', 'schema', 'anyOf', 'oneOf', 'allOf', 'items'].includes(key) || /\//.test(key))
    .flatMap(([, value]) => (Array.isArray(value) ? value.flatMap(referencedSchemas) : referencedSchemas(value)));
  return [...own, ...nested];
}
