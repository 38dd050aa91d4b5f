import { Module } from '@nestjs/common';
import { MODEL_TABLE, PriceTable } from '@parley/agent';
import { AppConfig, CONFIG } from '@parley/config';
import { BooksRepository } from './books.repository';
import { PassagesRepository } from './search/passages.repository';
import { Pool } from 'pg';
import { BookIngest } from './book-ingest';
import { BookQueries } from './book-queries';
import { BookSearch } from './book-search';
import { BookShelf } from './catalogue/book-shelf.repository';
import { BOOK_CONTEXTS, BOOK_EMBEDDINGS, BOOK_LIMITS } from './book.tokens';
import { contextsOf } from './contexts/book-contexts';
import { BookEmbeddings } from './embeddings/book-embeddings';
import { createEmbedder } from './embeddings/embedder';
import { EmbeddingsRepository } from './embeddings/embeddings.repository';
import { SearchBookTool } from './search-book.tool';
import { ListChaptersTool } from './reading/list-chapters.tool';
import { ReadPassageTool } from './reading/read-passage.tool';
import { WholeBooks } from './whole-books';

/** What the module's users inject; it also provides their collaborators and the tokens below. */
const EXPORTED = [
  BooksRepository,
  BookShelf,
  BookIngest,
  BookQueries,
  BookSearch,
  SearchBookTool,
  ListChaptersTool,
  ReadPassageTool,
  WholeBooks,
];

/**
 * Books: ingestion (BookIngest), the reader's books (BookQueries), search (BookSearch) and the
 * search_book agent tool. Needs the global DatabaseModule (the pg Pool) and ConfigModule.
 * The worker collects the agent tools (search_book, list_chapters, read_passage) into its tool registry.
 */
@Module({
  providers: [
    ...EXPORTED,
    PassagesRepository,
    { provide: BOOK_LIMITS, inject: [CONFIG], useFactory: (c: AppConfig) => c.books },
    {
      provide: BOOK_EMBEDDINGS,
      inject: [CONFIG, Pool],
      useFactory: (c: AppConfig, pool: Pool) => {
        const embedder = createEmbedder(c.embeddings);
        return embedder ? new BookEmbeddings(embedder, new EmbeddingsRepository(pool)) : null;
      },
    },
    {
      provide: BOOK_CONTEXTS,
      // the process's model table (ModelTableModule, global): the provider of CONTEXTUAL_MODEL, and its prices
      inject: [CONFIG, Pool, MODEL_TABLE],
      useFactory: (c: AppConfig, pool: Pool, table: PriceTable) =>
        c.contextual ? contextsOf(c.contextual, pool, c.budgetUsdPerMonth, table) : null,
    },
  ],
  exports: EXPORTED,
})
export class BooksModule {}
