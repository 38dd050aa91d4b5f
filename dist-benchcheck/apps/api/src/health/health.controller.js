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
exports.HealthController = void 0;
const common_1 = require("@nestjs/common");
const swagger_1 = require("@nestjs/swagger");
const pg_1 = require("pg");
const prom_client_1 = require("prom-client");
const platform_1 = require("@parley/platform");
const auth_guard_1 = require("../auth/auth.guard");
let HealthController = class HealthController {
    constructor(pool, redis) {
        this.pool = pool;
        this.redis = redis;
    }
    healthz() {
        return { status: 'ok' };
    }
    /** Ready when both Postgres and Redis answer within a second. */
    async readyz() {
        const within = (p) => Promise.race([p, new Promise((_, rej) => setTimeout(() => rej(new Error('timeout')), 1_000).unref())]);
        const [db, redis] = await Promise.allSettled([within(this.pool.query('SELECT 1')), within(this.redis.main.ping())]);
        const checks = {
            database: db.status === 'fulfilled' ? 'ok' : 'down',
            redis: redis.status === 'fulfilled' ? 'ok' : 'down',
        };
        if (checks.database !== 'ok' || checks.redis !== 'ok')
            throw new common_1.ServiceUnavailableException({ message: checks });
        return { status: 'ready', checks };
    }
    metrics() {
        return prom_client_1.register.metrics();
    }
};
exports.HealthController = HealthController;
__decorate([
    (0, common_1.Get)('healthz'),
    __metadata("design:type", Function),
    __metadata("design:paramtypes", []),
    __metadata("design:returntype", void 0)
], HealthController.prototype, "healthz", null);
__decorate([
    (0, common_1.Get)('readyz'),
    __metadata("design:type", Function),
    __metadata("design:paramtypes", []),
    __metadata("design:returntype", Promise)
], HealthController.prototype, "readyz", null);
__decorate([
    (0, common_1.Get)('metrics'),
    (0, common_1.Header)('content-type', prom_client_1.register.contentType),
    __metadata("design:type", Function),
    __metadata("design:paramtypes", []),
    __metadata("design:returntype", void 0)
], HealthController.prototype, "metrics", null);
exports.HealthController = HealthController = __decorate([
    (0, swagger_1.ApiExcludeController)(),
    (0, auth_guard_1.Public)(),
    (0, common_1.Controller)(),
    __param(0, (0, common_1.Inject)(pg_1.Pool)),
    __metadata("design:paramtypes", [pg_1.Pool,
        platform_1.RedisConnections])
], HealthController);
//# sourceMappingURL=health.controller.js.map