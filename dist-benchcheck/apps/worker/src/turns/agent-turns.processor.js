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
var AgentTurnsProcessor_1;
Object.defineProperty(exports, "__esModule", { value: true });
exports.AgentTurnsProcessor = exports.TURN_ATTEMPTS = exports.STALLED_INTERVAL_MS = exports.LOCK_MS = void 0;
const common_1 = require("@nestjs/common");
const bullmq_1 = require("@nestjs/bullmq");
const bullmq_2 = require("bullmq");
const agent_1 = require("@parley/agent");
const config_1 = require("@parley/config");
const agent_turn_runner_1 = require("./agent-turn.runner");
const running_turns_1 = require("./running-turns");
const turn_sequencer_1 = require("./turn-sequencer");
/**
 * Lock and stall settings, tuned for recovery after a worker is killed mid-turn: a lost lock
 * expires after LOCK_MS and the stalled-job check runs every STALLED_INTERVAL_MS, so another
 * worker picks the turn up within ~LOCK_MS + STALLED_INTERVAL_MS. The lock is renewed every
 * LOCK_MS / 2 by a live worker, so a long LLM call never looks stalled.
 */
exports.LOCK_MS = 10_000;
exports.STALLED_INTERVAL_MS = 5_000;
exports.TURN_ATTEMPTS = 5;
let AgentTurnsProcessor = AgentTurnsProcessor_1 = class AgentTurnsProcessor extends bullmq_1.WorkerHost {
    constructor(runner, running, sequencer, config) {
        super();
        this.runner = runner;
        this.running = running;
        this.sequencer = sequencer;
        this.config = config;
        this.logger = new common_1.Logger(AgentTurnsProcessor_1.name);
    }
    onApplicationBootstrap() {
        if (!this.config.worker.agentEnabled)
            return; // a projections-only worker
        this.worker.concurrency = this.config.worker.concurrency;
        this.worker.run().catch((e) => this.logger.error(`agent worker stopped: ${e.message}`));
    }
    async process(job, token) {
        switch (job.name) {
            case agent_1.JobName.RunTurn:
                return this.runTurn(job, token);
            default:
                throw new Error(`no handler for job ${job.name}`);
        }
    }
    async runTurn(job, token) {
        const { conversationId, turnId } = job.data;
        const outcome = await this.running.track(turnId, async (signal) => {
            try {
                return await this.runner.run(conversationId, turnId, signal);
            }
            catch (e) {
                const lastAttempt = job.attemptsMade + 1 >= (job.opts.attempts ?? 1);
                if (lastAttempt)
                    await this.runner.fail(conversationId, turnId, 'internal_error', String(e?.message ?? e), true);
                throw e;
            }
        });
        if (outcome.kind === 'wait') {
            // an earlier turn of this conversation is still running: come back when it ends (or soon)
            await job.moveToDelayed(Date.now() + 1_000, token);
            throw new bullmq_2.DelayedError();
        }
        await this.sequencer.promoteNext(conversationId);
    }
    onFailed(job, error) {
        if (job)
            this.logger.warn(`job ${job.id} failed (attempt ${job.attemptsMade}): ${error.message}`);
    }
};
exports.AgentTurnsProcessor = AgentTurnsProcessor;
__decorate([
    (0, bullmq_1.OnWorkerEvent)('failed'),
    __metadata("design:type", Function),
    __metadata("design:paramtypes", [Object, Error]),
    __metadata("design:returntype", void 0)
], AgentTurnsProcessor.prototype, "onFailed", null);
exports.AgentTurnsProcessor = AgentTurnsProcessor = AgentTurnsProcessor_1 = __decorate([
    (0, bullmq_1.Processor)(agent_1.AGENT_TURNS_QUEUE, {
        lockDuration: exports.LOCK_MS,
        stalledInterval: exports.STALLED_INTERVAL_MS,
        maxStalledCount: 10,
        autorun: false,
    }),
    __param(3, (0, common_1.Inject)(config_1.CONFIG)),
    __metadata("design:paramtypes", [agent_turn_runner_1.AgentTurnRunner,
        running_turns_1.RunningTurns,
        turn_sequencer_1.TurnSequencer, Object])
], AgentTurnsProcessor);
//# sourceMappingURL=agent-turns.processor.js.map