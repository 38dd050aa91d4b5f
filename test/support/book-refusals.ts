import { BookRejectedError } from '../../libs/books/src/book.errors';

/** How a book was refused: the BookRejectedError `p` rejected with; anything else fails the test. */
export async function refusalOf(p: Promise<unknown>): Promise<{ status: number; code: string; message: string }> {
  try {
    await p;
  } catch (e) {
    if (e instanceof BookRejectedError) return { status: e.status, code: e.code, message: e.message };
    throw e;
  }
  throw new Error('expected a BookRejectedError');
}
