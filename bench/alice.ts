/** The book the turn benchmarks talk about: Alice, its questions, and a passage the peers' tool returns. */
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { projectRoot } from '../libs/platform/src/project-root';
import { waitForBook } from '../test/support/factories/books';
import type { Client } from '../test/support/stack';

const ROOT = projectRoot(__dirname);

/** The questions of data/books/alice.qa.jsonl, in order. */
export const aliceQuestions = (): string[] =>
  readFileSync(path.join(ROOT, 'data/books/alice.qa.jsonl'), 'utf8')
    .split('\n')
    .filter(Boolean)
    .map((l) => JSON.parse(l).q as string);

/** A fixed ~2 KB passage: what a search tool returns where no database stands behind it. */
export const ALICE_PASSAGE = 'Alice was beginning to get very tired of sitting by her sister on the bank. '.repeat(25);

/** Uploads data/books/alice.txt as text through the API and waits until it is ready; its id. */
export async function uploadAlice(reader: Client): Promise<string> {
  const up = await reader.req('POST', '/v1/books', {
    title: "Alice's Adventures in Wonderland",
    format: 'text',
    content: readFileSync(path.join(ROOT, 'data/books/alice.txt'), 'utf8'),
  });
  if (up.status !== 202) throw new Error(`book upload: ${up.status} ${up.text}`);
  await waitForBook(reader, up.body.id, 120_000);
  return up.body.id as string;
}
