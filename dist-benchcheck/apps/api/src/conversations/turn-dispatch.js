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
var TurnDispatch_1;
Object.defineProperty(exports, "__esModule", { value: true });
exports.TurnDispatch = void 0;
const common_1 = require("@nestjs/common");
const bullmq_1 = require("@nestjs/bullmq");
const bullmq_2 = require("bullmq");
const agent_1 = require("@parley/agent");
const config_1 = require("@parley/config");
const platform_1 = require("@parley/platform");
/**
 * The API's fast path to the workers. It is only an optimisation: the worker's dispatcher
 * enqueues every posted turn from the log too (same job id), so a post whose enqueue fails
 * here (API crash, Redis blip) is still answered.
 */
let TurnDispatch = TurnDispatch_1 = class TurnDispatch {
    constructor(queue, redis, config) {
        this.queue = queue;
        this.redis = redis;
        this.config = config;
        this.logger = new common_1.Logger(TurnDispatch_1.name);
    }
    async turnPosted(conversationId, turnId) {
        await this.bestEffort('enqueue', () => this.queue.add(agent_1.JobName.RunTurn, { conversationId, turnId }, { jobId: (0, agent_1.runTurnJobId)(conversationId, turnId), ...agent_1.RUN_TURN_JOB_OPTIONS }));
    }
    /** Tells the worker running the turn to abort its LLM call now. */
    async turnCancelled(conversationId, turnId) {
        await this.bestEffort('cancel signal', () => this.redis.main.publish((0, agent_1.cancelChannel)(this.config.queuePrefix), JSON.stringify({ conversationId, turnId })));
    }
    async bestEffort(what, work) {
        const timeout = new Promise((_, rej) => setTimeout(() => rej(new Error('timeout')), 2_000).unref());
        await Promise.race([work(), timeout]).catch((e) => this.logger.warn(`${what} failed: ${e.message}`));
    }
};
exports.TurnDispatch = TurnDispatch;
exports.TurnDispatch = TurnDispatch = TurnDispatch_1 = __decorate([
    (0, common_1.Injectable)(),
    __param(0, (0, bullmq_1.InjectQueue)(agent_1.AGENT_TURNS_QUEUE)),
    __param(2, (0, common_1.Inject)(config_1.CONFIG)),
    __metadata("design:paramtypes", [bullmq_2.Queue,
        platform_1.RedisConnections, Object])
], TurnDispatch);
//# sourceMappingURL=turn-dispatch.js.map