import { LoggerModule } from 'nestjs-pino';
import { AppConfig, CONFIG } from '@parley/config';

/** Structured JSON logs (pino); request logs carry a request id. Pretty only on a developer's terminal. */
export const loggerModule = (component: 'api' | 'worker') =>
  LoggerModule.forRootAsync({
    inject: [CONFIG],
    useFactory: (config: AppConfig) => ({
      pinoHttp: {
        level: config.logLevel,
        base: { component },
        autoLogging: { ignore: (req) => ['/healthz', '/readyz', '/metrics'].includes(req.url ?? '') },
        redact: ['req.headers.authorization', 'req.query.access_token'],
        transport:
          config.env === 'development' && process.stdout.isTTY
            ? { target: 'pino-pretty', options: { singleLine: true } }
            : undefined,
      },
    }),
  });
