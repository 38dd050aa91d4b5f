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
exports.TurnSequencer = void 0;
const common_1 = require("@nestjs/common");
const bullmq_1 = require("@nestjs/bullmq");
const bullmq_2 = require("bullmq");
const agent_1 = require("@parley/agent");
const conversation_1 = require("@parley/conversation");
const event_store_1 = require("@parley/event-store");
/** Enqueues turns (idempotently, by job id) and wakes a conversation's next turn when one ends. */
let TurnSequencer = class TurnSequencer {
    constructor(queue, store) {
        this.queue = queue;
        this.store = store;
    }
    async enqueue(conversationId, turnId) {
        await this.queue.add(agent_1.JobName.RunTurn, { conversationId, turnId }, { jobId: (0, agent_1.runTurnJobId)(conversationId, turnId), ...agent_1.RUN_TURN_JOB_OPTIONS });
    }
    /** The conversation's oldest pending turn runs now instead of waiting out its delay. */
    async promoteNext(conversationId) {
        const events = await this.store.readStream((0, conversation_1.conversationStreamId)(conversationId));
        const next = (0, agent_1.turnsOf)(events).find((t) => !t.ending);
        if (!next)
            return;
        const job = await this.queue.getJob((0, agent_1.runTurnJobId)(conversationId, next.turnId));
        if (job && (await job.isDelayed()))
            await job.promote().catch(() => undefined);
        if (!job)
            await this.enqueue(conversationId, next.turnId);
    }
};
exports.TurnSequencer = TurnSequencer;
exports.TurnSequencer = TurnSequencer = __decorate([
    (0, common_1.Injectable)(),
    __param(0, (0, bullmq_1.InjectQueue)(agent_1.AGENT_TURNS_QUEUE)),
    __metadata("design:paramtypes", [bullmq_2.Queue,
        event_store_1.EventStore])
], TurnSequencer);
//# sourceMappingURL=turn-sequencer.js.map