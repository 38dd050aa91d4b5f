"use strict";
Object.defineProperty(exports, "__esModule", { value: true });
exports.loggerModule = void 0;
const nestjs_pino_1 = require("nestjs-pino");
const config_1 = require("@parley/config");
/** Structured JSON logs (pino); request logs carry a request id. Pretty only on a developer's terminal. */
const loggerModule = (component) => nestjs_pino_1.LoggerModule.forRootAsync({
    inject: [config_1.CONFIG],
    useFactory: (config) => ({
        pinoHttp: {
            level: config.logLevel,
            base: { component },
            autoLogging: { ignore: (req) => ['/healthz', '/readyz', '/metrics'].includes(req.url ?? '') },
            redact: ['req.headers.authorization', 'req.query.access_token'],
            transport: config.env === 'development' && process.stdout.isTTY
                ? { target: 'pino-pretty', options: { singleLine: true } }
                : undefined,
        },
    }),
});
exports.loggerModule = loggerModule;
//# sourceMappingURL=logger.js.map