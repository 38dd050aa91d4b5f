import { LoggerModule } from 'nestjs-pino';
import { AppConfig, CONFIG } from '@parley/config';
import { REDACTED, redactQuery, redactUrl } from './redact-url';

/** pino-http's serialized request: the fields whose values may hold an ?access_token=. */
interface SerializedRequest {
  url?: string;
  query?: unknown;
}

/**
 * Structured JSON logs (pino); request logs carry a request id. Pretty only on a developer's terminal.
 * Every log line of a request carries the request through this serializer, so no URL leaves unredacted.
 */
export const loggerModule = (component: 'api' | 'worker') =>
  LoggerModule.forRootAsync({
    inject: [CONFIG],
    useFactory: (config: AppConfig) => ({
      pinoHttp: {
        level: config.logLevel,
        base: { component },
        autoLogging: { ignore: (req) => ['/healthz', '/readyz', '/metrics'].includes(req.url ?? '') },
        serializers: {
          req: (req: SerializedRequest) =>
            Object.assign(req, { url: redactUrl(req.url ?? ''), query: redactQuery(req.query) }),
        },
        redact: { paths: ['req.headers.authorization'], censor: REDACTED },
        transport:
          config.env === 'development' && process.stdout.isTTY
            ? { target: 'pino-pretty', options: { singleLine: true } }
            : undefined,
      },
    }),
  });
