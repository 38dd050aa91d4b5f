import { Module } from '@nestjs/common';
import { BullModule } from '@nestjs/bullmq';
import { AGENT_TURNS_QUEUE } from '@parley/agent';
import { StreamWatcher } from '@parley/platform';
import { ConversationsController } from './conversations.controller';
import { ConversationsService } from './conversations.service';
import { EventStreamService } from './event-stream.service';
import { PostRateLimiter } from './post-rate-limiter';
import { TurnDispatch } from './turn-dispatch';

@Module({
  imports: [BullModule.registerQueue({ name: AGENT_TURNS_QUEUE })],
  controllers: [ConversationsController],
  providers: [ConversationsService, EventStreamService, PostRateLimiter, TurnDispatch, StreamWatcher],
  exports: [ConversationsService, TurnDispatch],
})
export class ConversationsModule {}
