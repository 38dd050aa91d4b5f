import { Module } from '@nestjs/common';
import { BullModule } from '@nestjs/bullmq';
import { AGENT_TURNS_QUEUE, LiveDeltas } from '@parley/agent';
import { BooksModule } from '@parley/books';
import { ReadModelsModule } from '@parley/read-models';
import { ErasureModule } from '@parley/erasure';
import { StreamWatcher } from '@parley/event-store';
import { AccountController } from '../account/account.controller';
import { ConversationUsageController } from '../usage/conversation-usage.controller';
import { RateLimitsModule } from '../rate-limits/rate-limits.module';
import { TenantModule } from '../tenant/tenant.module';
import { ReaderBudget } from '../usage/reader-budget';
import { UsageController } from '../usage/usage.controller';
import { UsageService } from '../usage/usage.service';
import { BatchStarting } from './batch-starting.service';
import { BatchesController } from './batches.controller';
import { ConversationEventsController } from './conversation-events.controller';
import { ConversationReads } from './conversation-reads.service';
import { ConversationsController } from './conversations.controller';
import { ApiConversationFolds } from './api-conversation-folds';
import { ConversationForking } from './conversation-forking';
import { ConversationStarting } from './conversation-starting';
import { ConversationUpdating } from './conversation-updating';
import { ConversationWrites } from './conversation-writes';
import { ReadableBooks } from './readable-books';
import { ToolApprovals } from './tool-approvals';
import { TurnCancelling } from './turn-cancelling';
import { ErasureRequests } from './erasure-requests.service';
import { EventStreamService } from './event-stream.service';
import { StreamReads } from './stream-reads';
import { MessagesController } from './messages.controller';
import { MessagePosting } from './message-posting.service';
import { TurnEnqueuer } from './turn-enqueuer';

/**
 * The reader's routes over their conversations, one controller per use case. One module, because
 * the use cases share their collaborators: one ApiConversationFolds (the process's fold cache),
 * one budget and enqueuer; modules of their own would only re-export them.
 */
@Module({
  imports: [
    BullModule.registerQueue({ name: AGENT_TURNS_QUEUE }),
    BooksModule,
    ReadModelsModule,
    ErasureModule,
    RateLimitsModule,
    TenantModule,
  ],
  // in this order the OpenAPI document lists their paths
  controllers: [
    ConversationsController,
    BatchesController,
    ConversationUsageController,
    MessagesController,
    ConversationEventsController,
    UsageController,
    AccountController,
  ],
  providers: [
    // the use cases the controllers call: one per command, and the reads
    ConversationStarting,
    ConversationUpdating,
    ConversationForking,
    MessagePosting,
    TurnCancelling,
    ToolApprovals,
    BatchStarting,
    ConversationReads,
    ErasureRequests,
    EventStreamService,
    StreamReads,
    UsageService,
    ReaderBudget,
    // what the use cases share: the process's folds and its one way to write them
    ApiConversationFolds,
    ConversationWrites,
    ReadableBooks,
    TurnEnqueuer,
    StreamWatcher,
    LiveDeltas,
  ],
  exports: [
    // the MCP server (apps/api/src/mcp) calls the same use cases, and follows turns as SSE does
    ConversationReads,
    MessagePosting,
    TurnCancelling,
    ToolApprovals,
    ConversationStarting,
    TurnEnqueuer,
    ReaderBudget,
    ErasureModule,
    StreamWatcher,
    LiveDeltas,
  ],
})
export class ConversationsModule {}
