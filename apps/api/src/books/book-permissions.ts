import { readerOf, ShelvedBook, TenantReader } from '@parley/books';
import { AuthUser } from '../auth/auth-user';
import { PUBLISHER_ROLE } from '../auth/roles-claim';
import { problem } from '../http/problem.exception';

/** The caller as a reader of books: their own, and the catalogue of their token's tenant. */
export function bookReaderOf(user: AuthUser): TenantReader {
  return readerOf(user.id, user.tenant);
}

const isPublisher = (user: AuthUser): boolean => user.roles?.includes(PUBLISHER_ROLE) ?? false;

/** The catalogue a publisher's upload goes to (their tenant's); 403 for anyone who is not a publisher. */
export function catalogueToPublishIn(user: AuthUser): string {
  if (!isPublisher(user))
    throw problem('forbidden', `only a token whose parley_roles claim holds "${PUBLISHER_ROLE}" may publish a book`);
  return bookReaderOf(user).catalogue;
}

/**
 * 403 unless the caller may rename or delete this book (one they can see): their own private
 * book, or a catalogue book of their tenant when they are a publisher.
 */
export function assertMayChange(user: AuthUser, shelved: ShelvedBook): void {
  if (shelved.tenant === null) return; // private: visible only to its owner
  if (isPublisher(user) && shelved.tenant === bookReaderOf(user).catalogue) return;
  throw problem('forbidden', 'a catalogue book is changed or withdrawn only by a publisher of its tenant');
}
