import { isSpanContextValid, trace } from '@opentelemetry/api';
import { RequestMethod } from '@nestjs/common';
import { LoggerModule } from 'nestjs-pino';
import { AppConfig, CONFIG } from '@parley/config';
import { REDACTED, redactQuery, redactUrl } from './redact-url';

/** pino-http's serialized request: the fields whose values may hold an ?access_token=. */
interface SerializedRequest {
  url?: string;
  query?: unknown;
  remoteAddress?: string;
  /** the request as it arrived; Fastify (middie) gives it `ip`, which TRUST_PROXY governs */
  raw?: { ip?: string };
}

/**
 * The active span's ids on every log line written under it, as the OpenTelemetry log data model
 * names them, so a line leads to its trace and back. Without tracing no span is ever active.
 */
export function traceFields(): { trace_id?: string; span_id?: string } {
  const sc = trace.getActiveSpan()?.spanContext();
  return sc && isSpanContextValid(sc) ? { trace_id: sc.traceId, span_id: sc.spanId } : {};
}

/** Whether pino-pretty is installed: a devDependency, absent where only production dependencies are (the image). */
export function prettyInstalled(): boolean {
  try {
    require.resolve('pino-pretty');
    return true;
  } catch {
    return false;
  }
}

/**
 * pino-http options. JSON lines (pino) with a request id, except with NODE_ENV=development, where
 * pino-pretty prints one readable line per entry, whether or not stdout is a terminal (`npm start`
 * runs the processes under concurrently, which pipes their output). pino-pretty is a
 * devDependency: where it is not installed, development logs JSON lines too. Every log line of a
 * request carries the request through the serializer, so no URL leaves unredacted.
 */
export const pinoHttpOptions = (
  config: Pick<AppConfig, 'env' | 'logLevel'>,
  component: 'api' | 'worker',
  pretty: () => boolean = prettyInstalled,
) => ({
  level: config.logLevel,
  base: { component },
  mixin: traceFields,
  autoLogging: { ignore: (req: { url?: string }) => ['/healthz', '/readyz', '/metrics'].includes(req.url ?? '') },
  serializers: {
    req: (req: SerializedRequest) =>
      Object.assign(req, {
        url: redactUrl(req.url ?? ''),
        query: redactQuery(req.query),
        // the client as Fastify's req.ip says: X-Forwarded-For only from a peer TRUST_PROXY names
        remoteAddress: req.raw?.ip ?? req.remoteAddress,
      }),
  },
  // credentials in headers: the bearer token, a proxy's, the queue board's token cookie (and any other), and cookies set
  redact: {
    paths: [
      'req.headers.authorization',
      'req.headers["proxy-authorization"]',
      'req.headers.cookie',
      'res.headers["set-cookie"]',
    ],
    censor: REDACTED,
  },
  transport:
    config.env === 'development' && pretty()
      ? { target: 'pino-pretty', options: { singleLine: true, translateTime: 'SYS:HH:MM:ss.l' } }
      : undefined,
});

export const loggerModule = (component: 'api' | 'worker') =>
  LoggerModule.forRootAsync({
    inject: [CONFIG],
    useFactory: (config: AppConfig) => ({
      pinoHttp: pinoHttpOptions(config, component),
      // nestjs-pino's default is the legacy '*', which Nest 11 converts with a warning at every start
      forRoutes: [{ path: '{*path}', method: RequestMethod.ALL }],
    }),
  });
