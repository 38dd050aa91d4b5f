import type { Schemas } from '../../../libs/api-client/src';
import { expectOk } from '../api';
import { Client } from '../stack';
import { waitFor } from '../wait-for';

/** A small Markdown book whose chapters each hold one findable fact. */
export function tinyBookMarkdown(): string {
  return [
    '# The Lighthouse Keeper',
    '',
    '## Chapter 1: Arrival',
    '',
    'Marisol arrived on the island of Vell on a grey morning. The ferryman warned her that the lighthouse lamp had been dark for nine winters.',
    '',
    'She carried a brass telescope that had belonged to her grandmother, and a tin of peppermint tea.',
    '',
    '## Chapter 2: The Lamp',
    '',
    'In the lamp room Marisol found a logbook bound in green leather. The last entry spoke of a ship called the Wandering Heron.',
    '',
    '## Chapter 3: The Storm',
    '',
    'The storm came at midnight. Marisol relit the lamp with the oil she had hidden in the cellar, and the Wandering Heron came safely home.',
  ].join('\n');
}

/** Uploads the tiny book and waits until the worker has ingested it (a book is usable once ready). */
export async function newBook(c: Client): Promise<Schemas['BookDto']> {
  const book = expectOk(
    await c.api.POST('/v1/books', {
      body: { title: 'The Lighthouse Keeper', author: 'A. Tester', format: 'markdown', content: tinyBookMarkdown() },
    }),
    202,
  );
  return waitForBook(c, book.id);
}

/** Polls GET /v1/books/:id until the book is ready; throws when it failed. */
export async function waitForBook(c: Client, id: string, timeoutMs = 30_000): Promise<Schemas['BookDto']> {
  let book: Schemas['BookDto'] | undefined;
  await waitFor(
    `book ${id} ready`,
    async () => {
      book = (await c.api.GET('/v1/books/{id}', { params: { path: { id } } })).data;
      if (book?.status === 'failed') throw new Error(`book ${id} failed: ${JSON.stringify(book.error)}`);
      return book?.status === 'ready';
    },
    timeoutMs,
    50,
  ).catch((e: Error) => {
    const last = book ? `status ${book.status}, progress ${JSON.stringify(book.progress ?? null)}` : 'not found';
    throw new Error(`${e.message}\nthe book, last seen: ${last}`);
  });
  return book!;
}
