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
var ProjectionsService_1;
Object.defineProperty(exports, "__esModule", { value: true });
exports.ProjectionsService = void 0;
const common_1 = require("@nestjs/common");
const config_1 = require("@parley/config");
const event_store_1 = require("@parley/event-store");
const read_models_1 = require("@parley/read-models");
/** Keeps the read models up with the log. Any number of workers may run it: the checkpoint CAS serialises them. */
let ProjectionsService = ProjectionsService_1 = class ProjectionsService {
    constructor(store, notifier, config) {
        this.config = config;
        this.logger = new common_1.Logger(ProjectionsService_1.name);
        this.runner = new event_store_1.CheckpointedConsumerRunner(store, new read_models_1.ConversationsProjection(), notifier, {
            pollMs: config.eventPollMs,
            onError: (e, event) => this.logger.error(`read-models failed${event ? ` on ${event.type} ${event.id}` : ''}: ${String(e?.message ?? e)}`),
        });
    }
    onApplicationBootstrap() {
        if (this.config.worker.projectionsEnabled)
            this.runner.start();
    }
    async onApplicationShutdown() {
        await this.runner.stop();
    }
};
exports.ProjectionsService = ProjectionsService;
exports.ProjectionsService = ProjectionsService = ProjectionsService_1 = __decorate([
    (0, common_1.Injectable)(),
    __param(2, (0, common_1.Inject)(config_1.CONFIG)),
    __metadata("design:paramtypes", [event_store_1.EventStore,
        event_store_1.AppendNotifier, Object])
], ProjectionsService);
//# sourceMappingURL=projections.service.js.map