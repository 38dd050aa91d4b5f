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
exports.RunningTurns = void 0;
const common_1 = require("@nestjs/common");
const agent_1 = require("@parley/agent");
const config_1 = require("@parley/config");
const platform_1 = require("@parley/platform");
/**
 * The turns this process is running, each with an AbortController. A cancel request published by
 * any API replica aborts the turn's LLM stream here at once.
 */
let RunningTurns = class RunningTurns {
    constructor(redis, config) {
        this.redis = redis;
        this.config = config;
        this.controllers = new Map();
    }
    async onApplicationBootstrap() {
        this.subscriber = this.redis.open('cancel-subscriber');
        this.subscriber.on('message', (_channel, message) => {
            try {
                this.cancel(JSON.parse(message).turnId);
            }
            catch {
                /* not a cancel request */
            }
        });
        await this.subscriber.subscribe((0, agent_1.cancelChannel)(this.config.queuePrefix));
    }
    async track(turnId, work) {
        const controller = new AbortController();
        this.controllers.set(turnId, controller);
        try {
            return await work(controller.signal);
        }
        finally {
            if (this.controllers.get(turnId) === controller)
                this.controllers.delete(turnId);
        }
    }
    cancel(turnId) {
        this.controllers.get(turnId)?.abort();
    }
    get size() {
        return this.controllers.size;
    }
    onApplicationShutdown() {
        for (const c of this.controllers.values())
            c.abort();
    }
};
exports.RunningTurns = RunningTurns;
exports.RunningTurns = RunningTurns = __decorate([
    (0, common_1.Injectable)(),
    __param(1, (0, common_1.Inject)(config_1.CONFIG)),
    __metadata("design:paramtypes", [platform_1.RedisConnections, Object])
], RunningTurns);
//# sourceMappingURL=running-turns.js.map