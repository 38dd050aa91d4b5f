import { Module } from '@nestjs/common';
import { BooksModule } from '@parley/books';
import { ConversationsModule } from '../conversations/conversations.module';
import { BooksController } from './books.controller';

/** The /books routes over the books library. */
@Module({
  imports: [BooksModule, ConversationsModule],
  controllers: [BooksController],
})
export class BooksHttpModule {}
