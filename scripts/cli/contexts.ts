/**
 * `contexts estimate|add [<bookId>]`: contextual retrieval for books already ingested, an admin
 * tool on the database of DATABASE_URL with the CONTEXTUAL_* settings, LLM_PRICES, and the
 * ANTHROPIC_* or OPENAI_* settings of the contextual model's provider. `estimate`
 * prints what the calls would cost and sends nothing; `add` prints the same estimate, then writes
 * the missing contexts (a re-run asks only for passages without one) and, with an embeddings
 * provider configured, embeds those passages again with their context.
 */
import { Pool } from 'pg';
import { priceTableWith } from '@parley/agent';
import {
  loadBudgetUsdPerMonth,
  loadContextualConfig,
  loadDatabaseUrl,
  loadEmbeddingsConfig,
  loadLlmPrices,
} from '@parley/config';
import {
  BookEmbeddings,
  contextsOf,
  createEmbedder,
  describeEstimate,
  EmbeddingsRepository,
  failureOf,
} from '@parley/books';
import { EXIT } from './errors';

export async function contexts(action: 'estimate' | 'add', bookId: string | undefined): Promise<number> {
  const config = loadContextualConfig({ CONTEXTUAL_RETRIEVAL: 'true', ...process.env });
  if (!config) {
    console.error(
      'contexts: CONTEXTUAL_RETRIEVAL is false here; unset it or set it to true to estimate or add contexts',
    );
    return EXIT.usage;
  }
  const pool = new Pool({ connectionString: loadDatabaseUrl() });
  try {
    // the operator's prices, as the worker has them: they price the calls and name the model's provider
    const c = contextsOf(config, pool, loadBudgetUsdPerMonth(), priceTableWith(loadLlmPrices()));
    const embedder = createEmbedder(loadEmbeddingsConfig());
    const embeddings = embedder ? new BookEmbeddings(embedder, new EmbeddingsRepository(pool)) : null;
    const books = bookId ? [{ id: bookId, title: bookId }] : await c.booksToSituate();
    let failed = 0;
    for (const b of books) {
      console.log(`${b.title} (${b.id}): ${describeEstimate(await c.estimate(b.id))}`);
      if (action === 'estimate') continue;
      try {
        const { state } = await c.contextualizeBook(b.id, ({ done, total }) => {
          if (done % 25 === 0 || done === total) console.log(`  contexts ${done}/${total}`);
        });
        console.log(`  done: $${state.usage.usd.toFixed(4)} (${JSON.stringify(state.usage)})`);
        if (embeddings) await embeddings.embedBook(b.id);
      } catch (e) {
        failed++;
        console.error(`  failed: ${failureOf(e)} (a re-run resumes)`);
      }
    }
    return failed ? EXIT.server : EXIT.ok;
  } finally {
    await pool.end();
  }
}
