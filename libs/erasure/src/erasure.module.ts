import { Module } from '@nestjs/common';
import { BullModule } from '@nestjs/bullmq';
import { AGENT_TURNS_QUEUE } from '@parley/agent';
import { BOOK_INGEST_QUEUE, BooksModule } from '@parley/books';
import { Erasures } from './erasures';

/** Erasure for the API's deletes and the worker's sweep. Needs the global DatabaseModule and a BullMQ root. */
@Module({
  imports: [BooksModule, BullModule.registerQueue({ name: AGENT_TURNS_QUEUE }, { name: BOOK_INGEST_QUEUE })],
  providers: [Erasures],
  exports: [Erasures],
})
export class ErasureModule {}
