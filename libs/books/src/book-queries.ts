import { Injectable } from '@nestjs/common';
import { BookNotFoundError } from './book.errors';
import { Book } from './book.types';
import { BooksRepository } from './books.repository';

/** A reader's books: the list, one book (any status), the titles of some. */
@Injectable()
export class BookQueries {
  constructor(private readonly repo: BooksRepository) {}

  list(ownerId: string): Promise<Book[]> {
    return this.repo.list(ownerId);
  }

  async get(ownerId: string, id: string): Promise<Book> {
    const book = await this.repo.find(ownerId, id);
    if (!book) throw new BookNotFoundError(id);
    return book;
  }

  /** The owner's books among `ids`, with title and status, in one statement (others' ids left out). */
  titlesIfOwnedBy(ownerId: string, ids: string[]): ReturnType<BooksRepository['titlesIfOwnedBy']> {
    return this.repo.titlesIfOwnedBy(ownerId, ids);
  }
}
