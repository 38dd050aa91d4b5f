import { Logger } from '@nestjs/common';
import { Pool } from 'pg';
import type { ContextualConfig } from '@parley/config';
import { addUsage, LlmError, PriceTable, roundUsd, zeroUsage } from '@parley/agent';
import { bookPrefix, cleanContext, ContextEstimate, describeEstimate, estimateCost } from './contextual-prompt';
import { ContextWriter, contextWriterFor } from './context-writer';
import { BookSpending } from './book-spending';
import { ContextsRepository, ContextualizationState, PassageToSituate } from './contexts.repository';

/** At most this often is the run's state (done, usage so far) written to the book. */
const PROGRESS_EVERY_MS = 1_000;

export interface ContextProgress {
  done: number;
  total: number;
}

export interface ContextRun {
  estimate: ContextEstimate;
  state: ContextualizationState;
}

/**
 * Contextual retrieval as a pass after a book is stored (like BookEmbeddings): asks the model for
 * the context of each passage that has none (so a re-run asks nothing twice), stores each as it
 * comes, records the estimate before the first call and the usage as calls return. The first
 * request runs alone so the book is in the cache before the others read it.
 */
export class BookContexts {
  private readonly logger = new Logger(BookContexts.name);

  constructor(
    readonly config: ContextualConfig,
    private readonly repo: ContextsRepository,
    private readonly spending: BookSpending,
    private readonly writer: ContextWriter,
    private readonly prices: PriceTable,
  ) {}

  /** What contextualising the book's remaining passages would cost; nothing is sent. */
  async estimate(bookId: string): Promise<ContextEstimate> {
    const { estimate } = await this.prepare(bookId);
    return estimate;
  }

  private async prepare(bookId: string) {
    const title = (await this.repo.title(bookId)) ?? 'Untitled';
    const passages = await this.repo.passages(bookId);
    const prefix = bookPrefix(title, passages, this.config.maxBookTokens);
    const pending = await this.repo.pending(bookId);
    const estimate = estimateCost(
      this.prices,
      this.config.model,
      prefix,
      pending.map((p) => p.text),
      this.writer.provider,
    );
    return { prefix: prefix.text, pending, estimate, total: passages.length };
  }

  /**
   * Contextualises the passages without a context. A passage whose request fails after the
   * SDK's retries ends the run: the state is recorded 'failed' with the error and the contexts
   * written so far stay (a re-run asks only for the rest); the error is rethrown.
   */
  async contextualizeBook(
    bookId: string,
    onProgress: (p: ContextProgress) => Promise<void> | void = () => undefined,
  ): Promise<ContextRun> {
    const { prefix, pending, estimate, total } = await this.prepare(bookId);
    const previous = await this.repo.state(bookId);
    // nothing left to ask: the finished run's record (estimate and usage) is kept as it is
    if (!pending.length && previous?.status === 'ready') return { estimate, state: previous };
    this.logger.log(`book ${bookId}: contextual retrieval, estimated ${describeEstimate(estimate)}`);
    // the usage recorded is the total over every run of the book (a failed run was paid for too)
    const spent = previous?.usage ?? { ...zeroUsage(), usd: 0 };
    let usage = zeroUsage(); // this run's
    const state = (status: ContextualizationState['status'], done: number, error?: string): ContextualizationState => ({
      status,
      model: this.config.model,
      estimate,
      usage: { ...addUsage(spent, usage), usd: roundUsd(spent.usd + this.prices.costUsd(this.config.model, usage)) },
      done,
      total,
      ...(error ? { error } : {}),
    });
    let done = total - pending.length;
    await this.repo.setState(bookId, state('running', done));
    await onProgress({ done, total });
    let recorded = Date.now();

    const situate = async (p: PassageToSituate) => {
      const { model, maxOutputTokens: maxTokens } = this.config;
      const reservation = await this.spending.reserve(bookId, { model, prefix, passage: p.text, maxTokens });
      const reply = await this.writer.situate(prefix, p.text).catch(async (e: unknown) => {
        await this.spending.release(reservation);
        throw e;
      });
      usage = addUsage(usage, reply.usage);
      await this.spending.record(bookId, { messageId: reply.messageId, model, usage: reply.usage }, reservation);
      const context = cleanContext(reply.text);
      if (!context)
        throw new Error(
          `the model wrote no context for passage ${p.id}` +
            (reply.stoppedAtMaxTokens
              ? ` before CONTEXTUAL_MAX_OUTPUT_TOKENS (${this.config.maxOutputTokens}) ran out (a reasoning model thinks within that limit)`
              : ''),
        );
      if (!(await this.repo.store(bookId, p.id, context)) && !(await this.repo.title(bookId)))
        throw Object.assign(new Error(`book ${bookId} was deleted`), { code: '23503' }); // stop paying for it
      done++;
      await onProgress({ done, total });
      if (Date.now() - recorded < PROGRESS_EVERY_MS) return;
      recorded = Date.now();
      await this.repo.setState(bookId, state('running', done));
    };

    try {
      if (pending.length) await situate(pending[0]);
      await pool(pending.slice(1), this.config.concurrency, situate);
    } catch (e) {
      const message = failureOf(e);
      await this.repo.setState(bookId, state('failed', done, message)).catch(() => undefined);
      this.logger.warn(`book ${bookId}: contextual retrieval failed after ${done}/${total}: ${message}`);
      throw e;
    }
    const final = state('ready', done);
    await this.repo.setState(bookId, final);
    this.logger.log(
      `book ${bookId}: ${pending.length} contexts written, $${final.usage.usd.toFixed(4)} (estimated $${estimate.usd.toFixed(4)})`,
    );
    return { estimate, state: final };
  }

  /** Ready books with passages still lacking a context. */
  booksToSituate() {
    return this.repo.booksToSituate();
  }

  state(bookId: string) {
    return this.repo.state(bookId);
  }
}

/**
 * Runs `work` over the items with at most `limit` at once. On the first failure no new item is
 * started; those in flight finish (their contexts are kept), then the failure is thrown.
 */
export async function pool<T>(items: T[], limit: number, work: (item: T) => Promise<void>): Promise<void> {
  let next = 0;
  let failure: { error: unknown } | null = null;
  const lane = async () => {
    while (!failure && next < items.length) {
      const item = items[next++];
      try {
        await work(item);
      } catch (error) {
        failure ??= { error };
      }
    }
  };
  await Promise.all(Array.from({ length: Math.max(1, Math.min(limit, items.length)) }, lane));
  if (failure) throw (failure as { error: unknown }).error;
}

/**
 * What a failed run records and logs: the provider's own words where it said something (the
 * operator's record, never shown to readers), else the error's message.
 */
export const failureOf = (e: unknown): string =>
  e instanceof LlmError && e.providerDetail ? e.providerDetail : (e as Error).message;

/**
 * Contextual retrieval over the database, its spending held to the uploaders' budgets (server's:
 * `serverBudgetUsd`) and priced by `table`, its calls to the provider `table` ties
 * CONTEXTUAL_MODEL to (ConfigError when that provider's credentials are missing).
 */
export function contextsOf(
  config: ContextualConfig,
  pool: Pool,
  serverBudgetUsd: number | null,
  table: PriceTable,
): BookContexts {
  const repo = new ContextsRepository(pool);
  const spending = new BookSpending(pool, repo, serverBudgetUsd, table);
  return new BookContexts(config, repo, spending, contextWriterFor(config, table), table);
}
