import { Injectable } from '@nestjs/common';
import { BooksRepository } from '@parley/books';
import { problem } from '../http/problem.exception';

/** The books a reader may give a conversation. */
@Injectable()
export class ReadableBooks {
  constructor(private readonly books: BooksRepository) {}

  /** The reader's ready books, in the order given: 404 for one that is not theirs, 409 for one not ready. */
  async ready(userId: string, bookIds: string[]): Promise<Array<{ id: string; title: string }>> {
    if (bookIds.length === 0) return [];
    const found = new Map((await this.books.titlesIfOwnedBy(userId, bookIds)).map((b) => [b.id, b]));
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
