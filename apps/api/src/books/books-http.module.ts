import { Module } from '@nestjs/common';
import { BooksModule } from '@parley/books';
import { BooksController } from './books.controller';

/** The /books routes over the books library. */
@Module({
  imports: [BooksModule],
  controllers: [BooksController],
})
export class BooksHttpModule {}
