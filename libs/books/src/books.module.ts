import { Module } from '@nestjs/common';
import { BooksRepository } from './books.repository';
import { BooksService } from './books.service';
import { SearchBookTool } from './search-book.tool';

/**
 * Books: ingest, retrieval and the search_book agent tool. Needs the global DatabaseModule
 * (the pg Pool). The agent module collects SearchBookTool into its tool registry.
 */
@Module({
  providers: [BooksRepository, BooksService, SearchBookTool],
  exports: [BooksRepository, BooksService, SearchBookTool],
})
export class BooksModule {}
