import { BooksRepository } from '@parley/books';
import { FoldedConversation } from './conversation-folds';

/** Names are read again after this long: a book renamed (PATCH /v1/books/:id) shows its new title within it. */
const NAMES_FOR_MS = 60_000;

/** The book's title and author, read once per book a minute: every LLM call of every turn needs it. */
export class BookNames {
  private readonly names = new Map<string, string>();
  private readSince = Date.now();

  constructor(private readonly books: BooksRepository) {}

  async of({ startedBookId: bookId }: Pick<FoldedConversation, 'startedBookId'>): Promise<string> {
    // the book the conversation started with: a later change of books is told in the messages, so the cached system prompt holds
    if (!bookId) return 'a book the reader has not chosen yet';
    if (Date.now() - this.readSince > NAMES_FOR_MS) {
      this.names.clear();
      this.readSince = Date.now();
    }
    const cached = this.names.get(bookId);
    if (cached) return cached;
    const book = await this.books.find(null, bookId);
    if (!book) return 'a book that is no longer available';
    const name = `"${book.title}"${book.author ? ` by ${book.author}` : ''}`;
    if (this.names.size >= 10_000) this.names.clear(); // just bound the memory
    this.names.set(bookId, name);
    return name;
  }
}
