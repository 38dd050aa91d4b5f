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
var TurnDispatcher_1;
Object.defineProperty(exports, "__esModule", { value: true });
exports.TurnDispatcher = void 0;
const common_1 = require("@nestjs/common");
const config_1 = require("@parley/config");
const conversation_1 = require("@parley/conversation");
const event_store_1 = require("@parley/event-store");
const turn_sequencer_1 = require("./turn-sequencer");
/**
 * Enqueues a job for every UserMessagePosted in the log, so a turn is answered even when the API
 * died between its append and its own enqueue. At least once; the job id makes repeats harmless.
 */
let TurnDispatcher = TurnDispatcher_1 = class TurnDispatcher {
    constructor(store, notifier, sequencer, config) {
        this.sequencer = sequencer;
        this.config = config;
        this.name = 'turn-dispatcher';
        this.logger = new common_1.Logger(TurnDispatcher_1.name);
        this.runner = new event_store_1.CheckpointedConsumerRunner(store, this, notifier, {
            pollMs: config.eventPollMs,
            onError: (e) => this.logger.error(`dispatch failed: ${e?.message ?? e}`),
        });
    }
    async handle(event) {
        if (event.type !== 'UserMessagePosted')
            return;
        const conversationId = (0, conversation_1.conversationIdOf)(event.streamId);
        if (!conversationId)
            return;
        await this.sequencer.enqueue(conversationId, event.data.turnId);
    }
    onApplicationBootstrap() {
        if (this.config.worker.dispatcherEnabled)
            this.runner.start();
    }
    async onApplicationShutdown() {
        await this.runner.stop();
    }
};
exports.TurnDispatcher = TurnDispatcher;
exports.TurnDispatcher = TurnDispatcher = TurnDispatcher_1 = __decorate([
    (0, common_1.Injectable)(),
    __param(3, (0, common_1.Inject)(config_1.CONFIG)),
    __metadata("design:paramtypes", [event_store_1.EventStore,
        event_store_1.AppendNotifier,
        turn_sequencer_1.TurnSequencer, Object])
], TurnDispatcher);
//# sourceMappingURL=turn-dispatcher.service.js.map