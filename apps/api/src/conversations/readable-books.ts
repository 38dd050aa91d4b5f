import { Injectable } from '@nestjs/common';
import { BookQueries, readerOf } from '@parley/books';
import { problem } from '../http/problem.exception';

/** The books a reader may give a conversation. */
@Injectable()
export class ReadableBooks {
  constructor(private readonly books: BookQueries) {}

  /**
   * The reader's ready books (their own, or their tenant's catalogue: `tenant` is their token's
   * parley_tenant), in the order given: 404 for one they may not see, 409 for one not ready.
   */
  async ready(
    userId: string,
    tenant: string | undefined,
    bookIds: string[],
  ): Promise<Array<{ id: string; title: string }>> {
    if (bookIds.length === 0) return [];
    const found = new Map((await this.books.titlesVisibleTo(readerOf(userId, tenant), bookIds)).map((b) => [b.id, b]));
    return bookIds.map((id) => {
      const book = found.get(id);
      if (!book) throw problem('book_not_found', `book ${id} not found`);
      if (book.status !== 'ready')
        throw problem(
          'book_not_ready',
          book.status === 'failed'
            ? `book ${id} failed to ingest: upload it again`
            : `book ${id} is still being ingested: try again when GET /v1/books/{id} says ready`,
        );
      return { id: book.id, title: book.title };
    });
  }
}
