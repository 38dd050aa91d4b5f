import { Injectable } from '@nestjs/common';
import { BookNotFoundError } from './book.errors';
import { Book } from './book.types';
import { BookReader, TenantReader } from './catalogue/book-reader';
import { BookPage, BookShelf, ShelvedBook } from './catalogue/book-shelf.repository';

/** A reader's books (their own and their tenant's catalogue): a page of them, one book (any status), the titles of some. */
@Injectable()
export class BookQueries {
  constructor(private readonly shelf: BookShelf) {}

  list(reader: TenantReader, opts: Parameters<BookShelf['page']>[1]): Promise<BookPage> {
    return this.shelf.page(reader, opts);
  }

  async get(reader: BookReader, id: string): Promise<Book> {
    return (await this.shelved(reader, id)).book;
  }

  /** The book with its owner and tenant, for deciding who may change it; BookNotFoundError when the reader may not see it. */
  async shelved(reader: BookReader, id: string): Promise<ShelvedBook> {
    const found = await this.shelf.find(reader, id);
    if (!found) throw new BookNotFoundError(id);
    return found;
  }

  /** The reader's books among `ids`, with title and status, in one statement (ids they may not see left out). */
  titlesVisibleTo(reader: BookReader, ids: string[]): ReturnType<BookShelf['titles']> {
    return this.shelf.titles(reader, ids);
  }
}
