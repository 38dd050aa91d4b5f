import { Module } from '@nestjs/common';
import { BullModule } from '@nestjs/bullmq';
import { BOOK_INGEST_QUEUE, BooksModule } from '@parley/books';
import { ConversationsModule } from '../conversations/conversations.module';
import { RateLimitsModule } from '../rate-limits/rate-limits.module';
import { BookEventStream } from './book-event-stream';
import { BookIngestDispatch } from './book-ingest-dispatch';
import { BooksController } from './books.controller';

/** The /books routes over the books library; ingestion itself runs in the worker (book-ingest queue). */
@Module({
  imports: [BooksModule, ConversationsModule, RateLimitsModule, BullModule.registerQueue({ name: BOOK_INGEST_QUEUE })],
  controllers: [BooksController],
  providers: [BookIngestDispatch, BookEventStream],
})
export class BooksHttpModule {}
