"use strict";
Object.defineProperty(exports, "__esModule", { value: true });
require("reflect-metadata");
const core_1 = require("@nestjs/core");
const nestjs_pino_1 = require("nestjs-pino");
const worker_module_1 = require("./worker.module");
async function main() {
    const app = await core_1.NestFactory.createApplicationContext(worker_module_1.WorkerModule, { bufferLogs: true });
    app.useLogger(app.get(nestjs_pino_1.Logger));
    app.enableShutdownHooks();
    await app.init();
    app.get(nestjs_pino_1.Logger).log('worker started');
}
main().catch((e) => {
    console.error(e.message);
    process.exit(1);
});
//# sourceMappingURL=main.js.map