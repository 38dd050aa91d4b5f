"use strict";
var __decorate = (this && this.__decorate) || function (decorators, target, key, desc) {
    var c = arguments.length, r = c < 3 ? target : desc === null ? desc = Object.getOwnPropertyDescriptor(target, key) : desc, d;
    if (typeof Reflect === "object" && typeof Reflect.decorate === "function") r = Reflect.decorate(decorators, target, key, desc);
    else for (var i = decorators.length - 1; i >= 0; i--) if (d = decorators[i]) r = (c < 3 ? d(r) : c > 3 ? d(target, key, r) : d(target, key)) || r;
    return c > 3 && r && Object.defineProperty(target, key, r), r;
};
Object.defineProperty(exports, "__esModule", { value: true });
exports.WorkerModule = void 0;
const common_1 = require("@nestjs/common");
const bullmq_1 = require("@nestjs/bullmq");
const agent_1 = require("@parley/agent");
const books_1 = require("@parley/books");
const config_1 = require("@parley/config");
const platform_1 = require("@parley/platform");
const projections_service_1 = require("./projections/projections.service");
const agent_turn_runner_1 = require("./turns/agent-turn.runner");
const agent_turns_processor_1 = require("./turns/agent-turns.processor");
const llm_provider_1 = require("./turns/llm.provider");
const running_turns_1 = require("./turns/running-turns");
const turn_dispatcher_service_1 = require("./turns/turn-dispatcher.service");
const turn_sequencer_1 = require("./turns/turn-sequencer");
/** The worker root: no HTTP port; agent turns (BullMQ), projections and the turn dispatcher. */
let WorkerModule = class WorkerModule {
};
exports.WorkerModule = WorkerModule;
exports.WorkerModule = WorkerModule = __decorate([
    (0, common_1.Module)({
        imports: [
            config_1.ConfigModule,
            (0, platform_1.loggerModule)('worker'),
            platform_1.DatabaseModule,
            platform_1.RedisModule,
            (0, platform_1.queueRootModule)(),
            bullmq_1.BullModule.registerQueue({ name: agent_1.AGENT_TURNS_QUEUE }),
            books_1.BooksModule,
        ],
        providers: [
            projections_service_1.ProjectionsService,
            llm_provider_1.llmProvider,
            {
                provide: agent_1.ToolRegistry,
                inject: [books_1.SearchBookTool],
                useFactory: (search) => new agent_1.ToolRegistry([search]),
            },
            agent_turn_runner_1.AgentTurnRunner,
            agent_turns_processor_1.AgentTurnsProcessor,
            running_turns_1.RunningTurns,
            turn_sequencer_1.TurnSequencer,
            turn_dispatcher_service_1.TurnDispatcher,
        ],
    })
], WorkerModule);
//# sourceMappingURL=worker.module.js.map