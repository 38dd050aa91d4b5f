import { BooksRepository } from '@parley/books';
import { LoadedTurn } from './conversation-folds';

/** The book's title and author, read once per book: every LLM call of every turn needs it. */
export class BookNames {
  private readonly names = new Map<string, string>();

  constructor(private readonly books: BooksRepository) {}

  async of(loaded: LoadedTurn): Promise<string> {
    // the book the conversation started with: a later change of books is told in the messages, so the cached system prompt holds
    const bookId = loaded.startedBookId;
    if (!bookId) return 'a book the reader has not chosen yet';
    const cached = this.names.get(bookId);
    if (cached) return cached;
    const book = await this.books.find(null, bookId);
    if (!book) return 'a book that is no longer available';
    const name = `"${book.title}"${book.author ? ` by ${book.author}` : ''}`;
    if (this.names.size >= 10_000) this.names.clear(); // titles never change; just bound the memory
    this.names.set(bookId, name);
    return name;
  }
}
