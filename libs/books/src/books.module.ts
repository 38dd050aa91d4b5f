import { Module } from '@nestjs/common';
import { AppConfig, CONFIG } from '@parley/config';
import { BooksRepository } from './books.repository';
import { BOOK_LIMITS, BooksService } from './books.service';
import { SearchBookTool } from './search-book.tool';

/**
 * Books: ingest, retrieval and the search_book agent tool. Needs the global DatabaseModule
 * (the pg Pool) and ConfigModule. The agent module collects SearchBookTool into its tool registry.
 */
@Module({
  providers: [
    BooksRepository,
    BooksService,
    SearchBookTool,
    { provide: BOOK_LIMITS, inject: [CONFIG], useFactory: (c: AppConfig) => c.books },
  ],
  exports: [BooksRepository, BooksService, SearchBookTool],
})
export class BooksModule {}
