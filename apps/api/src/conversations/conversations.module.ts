import { Module } from '@nestjs/common';
import { BullModule } from '@nestjs/bullmq';
import { AGENT_TURNS_QUEUE, LiveDeltas } from '@parley/agent';
import { BooksModule } from '@parley/books';
import { ReadModelsModule } from '@parley/read-models';
import { ErasureModule } from '@parley/erasure';
import { StreamWatcher } from '@parley/event-store';
import { ConversationsController } from './conversations.controller';
import { ConversationsService } from './conversations.service';
import { EventStreamService } from './event-stream.service';
import { PostRateLimiter } from './post-rate-limiter';
import { TurnEnqueuer } from './turn-enqueuer';
import { UsageController } from '../usage/usage.controller';
import { AccountController } from '../account/account.controller';
import { ReaderBudget } from '../usage/reader-budget';
import { UsageService } from '../usage/usage.service';

@Module({
  imports: [BullModule.registerQueue({ name: AGENT_TURNS_QUEUE }), BooksModule, ReadModelsModule, ErasureModule],
  controllers: [ConversationsController, UsageController, AccountController],
  providers: [
    ConversationsService,
    EventStreamService,
    PostRateLimiter,
    TurnEnqueuer,
    StreamWatcher,
    LiveDeltas,
    UsageService,
    ReaderBudget,
  ],
  exports: [ConversationsService, TurnEnqueuer, PostRateLimiter, ErasureModule],
})
export class ConversationsModule {}
