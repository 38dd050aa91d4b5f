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
exports.LiveDeltas = void 0;
const common_1 = require("@nestjs/common");
const config_1 = require("@parley/config");
const redis_connections_1 = require("./redis-connections");
/**
 * Token deltas over Redis pub/sub, one channel per conversation, so an SSE client on any API
 * replica sees the text a worker on any machine is writing. One subscriber connection per
 * process, channels reference-counted across that process's listeners.
 */
let LiveDeltas = class LiveDeltas {
    constructor(redis, config) {
        this.redis = redis;
        this.config = config;
        this.listeners = new Map();
    }
    channel(conversationId) {
        return `${this.config.queuePrefix}:deltas:${conversationId}`;
    }
    async publish(conversationId, delta) {
        await this.redis.main.publish(this.channel(conversationId), JSON.stringify(delta));
    }
    async subscribe(conversationId, listener) {
        const channel = this.channel(conversationId);
        const sub = this.ensureSubscriber();
        let set = this.listeners.get(channel);
        if (!set) {
            set = new Set();
            this.listeners.set(channel, set);
            await sub.subscribe(channel);
        }
        set.add(listener);
        return () => {
            const current = this.listeners.get(channel);
            if (!current)
                return;
            current.delete(listener);
            if (current.size === 0) {
                this.listeners.delete(channel);
                sub.unsubscribe(channel).catch(() => undefined);
            }
        };
    }
    ensureSubscriber() {
        if (this.subscriber)
            return this.subscriber;
        // ioredis re-subscribes its channels by itself after a reconnect
        const sub = this.redis.open('deltas-subscriber');
        sub.on('message', (channel, message) => {
            const set = this.listeners.get(channel);
            if (!set)
                return;
            let delta;
            try {
                delta = JSON.parse(message);
            }
            catch {
                return;
            }
            for (const l of set)
                l(delta);
        });
        this.subscriber = sub;
        return sub;
    }
    onApplicationShutdown() {
        this.listeners.clear();
    }
};
exports.LiveDeltas = LiveDeltas;
exports.LiveDeltas = LiveDeltas = __decorate([
    (0, common_1.Injectable)(),
    __param(1, (0, common_1.Inject)(config_1.CONFIG)),
    __metadata("design:paramtypes", [redis_connections_1.RedisConnections, Object])
], LiveDeltas);
//# sourceMappingURL=live-deltas.js.map