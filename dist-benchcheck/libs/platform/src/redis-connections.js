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
var __importDefault = (this && this.__importDefault) || function (mod) {
    return (mod && mod.__esModule) ? mod : { "default": mod };
};
Object.defineProperty(exports, "__esModule", { value: true });
exports.RedisConnections = void 0;
const common_1 = require("@nestjs/common");
const ioredis_1 = __importDefault(require("ioredis"));
const config_1 = require("@parley/config");
/**
 * Hands out ioredis connections (commands, pub/sub, BullMQ need separate ones) and closes them
 * all at shutdown. maxRetriesPerRequest: null is what BullMQ requires, and lets commands wait
 * out a Redis restart instead of failing.
 */
let RedisConnections = class RedisConnections {
    constructor(config) {
        this.opened = [];
        this.url = config.redisUrl;
        this.main = this.open('main');
    }
    open(name, extra = {}) {
        const redis = new ioredis_1.default(this.url, { maxRetriesPerRequest: null, connectionName: `parley-${name}`, ...extra });
        redis.on('error', () => undefined); // ioredis reconnects by itself; readiness reports the outage
        this.opened.push(redis);
        return redis;
    }
    async onApplicationShutdown() {
        await Promise.all(this.opened.map((r) => r.quit().catch(() => r.disconnect())));
    }
};
exports.RedisConnections = RedisConnections;
exports.RedisConnections = RedisConnections = __decorate([
    (0, common_1.Injectable)(),
    __param(0, (0, common_1.Inject)(config_1.CONFIG)),
    __metadata("design:paramtypes", [Object])
], RedisConnections);
//# sourceMappingURL=redis-connections.js.map