"use strict";
Object.defineProperty(exports, "__esModule", { value: true });
exports.JSON_BODY_LIMIT = void 0;
exports.createApiApp = createApiApp;
const common_1 = require("@nestjs/common");
const core_1 = require("@nestjs/core");
const swagger_1 = require("@nestjs/swagger");
const nestjs_pino_1 = require("nestjs-pino");
const api_module_1 = require("./api.module");
exports.JSON_BODY_LIMIT = '1mb';
/** Builds the API app exactly as production runs it (tests use this too). */
async function createApiApp() {
    const app = await core_1.NestFactory.create(api_module_1.ApiModule, { bufferLogs: true, bodyParser: false });
    app.useLogger(app.get(nestjs_pino_1.Logger));
    app.useBodyParser('json', { limit: exports.JSON_BODY_LIMIT });
    app.setGlobalPrefix('v1', { exclude: ['healthz', 'readyz', 'metrics'] });
    app.useGlobalPipes(new common_1.ValidationPipe({
        whitelist: true,
        forbidNonWhitelisted: true,
        transform: true,
        stopAtFirstError: false,
    }));
    app.set('trust proxy', true);
    app.enableShutdownHooks();
    const docs = new swagger_1.DocumentBuilder()
        .setTitle('Parley')
        .setDescription('Event-sourced conversations with an agent that reads books. Events stream over SSE.')
        .setVersion('1')
        .addBearerAuth()
        .build();
    swagger_1.SwaggerModule.setup('docs', app, () => swagger_1.SwaggerModule.createDocument(app, docs));
    return app;
}
//# sourceMappingURL=create-api-app.js.map