/**
 * `embeddings reembed`: an admin tool on the database of DATABASE_URL with the EMBEDDINGS_*
 * settings of the environment: embeds every ready book whose vectors are of another model (or
 * failed, or were never made) with the configured model, then drops its old vectors. Only the
 * passages still lacking a vector are sent, so an interrupted run resumes where it stopped.
 */
import { Pool } from 'pg';
import { loadDatabaseUrl, loadEmbeddingsConfig } from '@parley/config';
import { BookEmbeddings, BookIngest, BooksRepository, createEmbedder, EmbeddingsRepository } from '@parley/books';
import { EXIT } from './errors';

export async function reembedBooks(): Promise<number> {
  const embedder = createEmbedder(loadEmbeddingsConfig());
  if (!embedder) {
    console.error('EMBEDDINGS_PROVIDER is none: nothing to embed with');
    return EXIT.usage;
  }
  const pool = new Pool({ connectionString: loadDatabaseUrl() });
  try {
    const ingest = new BookIngest(
      new BooksRepository(pool),
      undefined,
      new BookEmbeddings(embedder, new EmbeddingsRepository(pool)),
    );
    const { books: n, failed } = await ingest.reembed((b, i, of) =>
      console.log(`[${i}/${of}] ${b.title} (${b.id}) → ${embedder.model}`),
    );
    console.log(`${n - failed.length} of ${n} books embedded with ${embedder.model}`);
    return failed.length ? EXIT.server : EXIT.ok;
  } finally {
    await pool.end();
  }
}
