"use strict";
var __decorate = (this && this.__decorate) || function (decorators, target, key, desc) {
    var c = arguments.length, r = c < 3 ? target : desc === null ? desc = Object.getOwnPropertyDescriptor(target, key) : desc, d;
    if (typeof Reflect === "object" && typeof Reflect.decorate === "function") r = Reflect.decorate(decorators, target, key, desc);
    else for (var i = decorators.length - 1; i >= 0; i--) if (d = decorators[i]) r = (c < 3 ? d(r) : c > 3 ? d(target, key, r) : d(target, key)) || r;
    return c > 3 && r && Object.defineProperty(target, key, r), r;
};
var __metadata = (this && this.__metadata) || function (k, v) {
    if (typeof Reflect === "object" && typeof Reflect.metadata === "function") return Reflect.metadata(k, v);
};
var __param = (this && this.__param) || function (paramIndex, decorator) {
    return function (target, key) { decorator(target, key, paramIndex); }
};
Object.defineProperty(exports, "__esModule", { value: true });
exports.DatabaseModule = void 0;
const common_1 = require("@nestjs/common");
const pg_1 = require("pg");
const config_1 = require("@parley/config");
const event_store_1 = require("@parley/event-store");
/** One pg Pool per process, the event store on it, and the LISTEN connection for appends. */
let DatabaseModule = class DatabaseModule {
    constructor(pool, notifier) {
        this.pool = pool;
        this.notifier = notifier;
    }
    async onApplicationShutdown() {
        await this.notifier.stop();
        await this.pool.end();
    }
};
exports.DatabaseModule = DatabaseModule;
exports.DatabaseModule = DatabaseModule = __decorate([
    (0, common_1.Global)(),
    (0, common_1.Module)({
        providers: [
            {
                provide: pg_1.Pool,
                inject: [config_1.CONFIG],
                useFactory: (config) => {
                    const pool = new pg_1.Pool({ connectionString: config.databaseUrl, max: 20, application_name: 'parley' });
                    pool.on('error', () => undefined); // an idle client's connection dropped: the pool replaces it
                    return pool;
                },
            },
            { provide: event_store_1.EventStore, inject: [pg_1.Pool], useFactory: (pool) => new event_store_1.EventStore(pool) },
            {
                provide: event_store_1.AppendNotifier,
                inject: [config_1.CONFIG],
                useFactory: async (config) => {
                    const notifier = new event_store_1.AppendNotifier(config.databaseUrl);
                    await notifier.start();
                    return notifier;
                },
            },
        ],
        exports: [pg_1.Pool, event_store_1.EventStore, event_store_1.AppendNotifier],
    }),
    __param(0, (0, common_1.Inject)(pg_1.Pool)),
    __metadata("design:paramtypes", [pg_1.Pool,
        event_store_1.AppendNotifier])
], DatabaseModule);
//# sourceMappingURL=database.module.js.map