import { Module } from '@nestjs/common';
import { BullModule } from '@nestjs/bullmq';
import {
  AGENT_TURNS_QUEUE,
  FixedTools,
  LiveDeltas,
  McpToolServers,
  ModelTableModule,
  ToolRegistry,
} from '@parley/agent';
import { BOOK_INGEST_QUEUE, BooksModule, ListChaptersTool, ReadPassageTool, SearchBookTool } from '@parley/books';
import { AppConfig, CONFIG, ConfigModule } from '@parley/config';
import { WebhookSender } from '@parley/webhooks';
import { RepositoriesModule } from '../../common/repositories.module';
import { EventStoreModule } from '@parley/event-store';
import { DatabaseModule, loggerModule, queueRootModule, RedisModule, TracingShutdown } from '@parley/platform';
import { ReadModelsModule } from '@parley/read-models';
import { ErasureModule } from '@parley/erasure';
import { ErasureSweeper } from './erasure/erasure-sweeper.service';
import { BookIngestProcessor } from './books/book-ingest.processor';
import { BookIngestSweeper } from './books/book-ingest-sweeper.service';
import { ProjectionsService } from './projections/projections.service';
import { AgentTurnRunner } from './turns/agent-turn.runner';
import { AgentTurnsProcessor } from './turns/agent-turns.processor';
import { llmProvider } from './turns/llm.provider';
import { RunningTurns } from './turns/running-turns';
import { TurnDispatcher } from './turns/turn-dispatcher.service';
import { TurnSequencer } from './turns/turn-sequencer';
import { BatchCompleter } from './turns/batch-completer';
import { TurnSweeper } from './turns/turn-sweeper.service';
import { TurnBudget } from './turns/turn-budget';
import { TurnSteps } from './turns/turn-steps';
import { ConversationFolds } from './turns/conversation-folds';
import { MeteredToolRegistry } from './metrics/metered-tool-registry';
import { WorkerMetrics } from './metrics/worker-metrics';
import { WorkerMetricsModule } from './metrics/worker-metrics.module';
import { TakingWorker } from './turns/taking-worker';
import { OrphanedLocks } from './turns/orphaned-locks';
import { WebhookDeliveries } from './webhooks/webhook-deliveries.service';

// the processors' workers say when they take a job (the agent's starts the turn's read then)
BullModule.workerClass = TakingWorker;

/** The worker root: no HTTP port (but /metrics on WORKER_METRICS_PORT, when set); agent turns and book ingestion (BullMQ), projections and the turn dispatcher. */
@Module({
  imports: [
    ConfigModule,
    // LLM_PRICES over the shipped prices: what routes, prices and budgets the model calls
    ModelTableModule,
    loggerModule('worker'),
    DatabaseModule,
    EventStoreModule,
    RepositoriesModule,
    RedisModule,
    queueRootModule(),
    BullModule.registerQueue({ name: AGENT_TURNS_QUEUE }, { name: BOOK_INGEST_QUEUE }),
    BooksModule,
    ReadModelsModule,
    ErasureModule,
    WorkerMetricsModule,
  ],
  providers: [
    TracingShutdown,
    LiveDeltas,
    ProjectionsService,
    llmProvider,
    // the operator's MCP tool servers (MCP_TOOL_SERVERS), connected in the background
    McpToolServers,
    {
      provide: ToolRegistry,
      inject: [SearchBookTool, ListChaptersTool, ReadPassageTool, McpToolServers, WorkerMetrics],
      useFactory: (
        search: SearchBookTool,
        chapters: ListChaptersTool,
        read: ReadPassageTool,
        operators: McpToolServers,
        metrics: WorkerMetrics,
      ) => new MeteredToolRegistry([new FixedTools([search, chapters, read]), operators], metrics),
    },
    ConversationFolds,
    AgentTurnRunner,
    TurnBudget,
    TurnSteps,
    AgentTurnsProcessor,
    RunningTurns,
    OrphanedLocks,
    TurnSequencer,
    TurnDispatcher,
    TurnSweeper,
    BatchCompleter,
    BookIngestProcessor,
    BookIngestSweeper,
    ErasureSweeper,
    WebhookDeliveries,
    { provide: WebhookSender, inject: [CONFIG], useFactory: (c: AppConfig) => new WebhookSender(c.webhooks) },
  ],
})
export class WorkerModule {}
