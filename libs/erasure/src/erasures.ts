import { Inject, Injectable, Logger, Optional } from '@nestjs/common';
import { InjectQueue } from '@nestjs/bullmq';
import { Queue } from 'bullmq';
import { Pool } from 'pg';
import { AGENT_TURNS_QUEUE } from '@parley/agent';
import { BOOK_INGEST_QUEUE, BookShelf, BooksRepository, ingestJobId } from '@parley/books';
import { DomainError, ErasureSubject } from '@parley/conversation';
import { EventStore } from '@parley/event-store';
import { ConversationLogQueries, TenantBudgets, UsageLedger } from '@parley/read-models';
import { WebhookEndpoints } from '@parley/webhooks';
import { ConversationEraser, ErasedConversation } from './conversation-eraser';
import { ErasedJobs } from './erased-jobs';
import { ErasureJournal, JournalEntry } from './erasure-journal';
import { ErasureRepository } from './erasure.repository';
import { CatalogueWithdrawal } from './catalogue-withdrawal';

/** How old an open erasure record is before the sweep takes it for one that did not finish (a crash). */
const UNFINISHED_AFTER = '1 minute';

/** How far back the sweep looks for forks made while a book or an account erasure ran. */
const LATE_FORKS_LOOKBACK = '1 day';

/** What an erasure of a book or an account removed. */
export interface ErasureResult {
  conversations: ErasedConversation[];
  books: number;
}

/** An erasure done again from the journal: what it found still there, or why it could not. */
export interface ReplayedErasure {
  entry: JournalEntry;
  conversations: number;
  books: number;
  /** set when the entry cannot be replayed (a book erasure that names no reader) */
  skipped?: string;
}

/** What a pass over the journal did. */
export interface JournalReplay {
  /** entries read from the journal */
  entries: number;
  /** those this database did not show completed, erased again */
  replayed: ReplayedErasure[];
}

/**
 * A reader's erasures (docs/erasure.md): a conversation, a book with every conversation that ever
 * had it, or their whole account. Each is audited (`erasures`), erases conversations through the
 * event store, and removes the Redis jobs that held their data, now or, for a job still running,
 * in the worker's sweep. Callers stop the turns left running (cancel signals).
 */
@Injectable()
export class Erasures {
  private readonly logger = new Logger(Erasures.name);
  private readonly jobs: ErasedJobs;
  private readonly withdrawal: CatalogueWithdrawal;

  constructor(
    private readonly store: EventStore,
    @Inject(Pool) private readonly pool: Pool,
    private readonly books: BooksRepository,
    private readonly shelf: BookShelf,
    private readonly repo: ErasureRepository,
    private readonly ledger: UsageLedger,
    private readonly log: ConversationLogQueries,
    private readonly eraser: ConversationEraser,
    private readonly endpoints: WebhookEndpoints,
    private readonly budgets: TenantBudgets,
    // none: the Redis jobs of what is erased are left listed for a worker's sweep (the CLI)
    @InjectQueue(AGENT_TURNS_QUEUE) turns: Queue | undefined,
    @InjectQueue(BOOK_INGEST_QUEUE) ingest: Queue | undefined,
    // none: erasures are not journaled (no journal database could be made), and a restored backup brings back what was erased after it
    @Optional() @Inject(ErasureJournal) private readonly journal: ErasureJournal | null = null,
  ) {
    this.withdrawal = new CatalogueWithdrawal(store, shelf); // its collaborators are per transaction
    this.jobs = new ErasedJobs(
      this.repo,
      new Map(
        [
          [AGENT_TURNS_QUEUE, turns],
          [BOOK_INGEST_QUEUE, ingest],
        ].filter((q): q is [string, Queue] => q[1] !== undefined),
      ),
    );
  }

  /** Erasures outside Nest (the CLI, tests), with their repositories on `pool`. */
  static on(
    pool: Pool,
    { turns, ingest, journal = null }: { turns?: Queue; ingest?: Queue; journal?: ErasureJournal | null } = {},
  ): Erasures {
    const store = new EventStore(pool);
    return new Erasures(
      store,
      pool,
      new BooksRepository(pool),
      new BookShelf(pool),
      new ErasureRepository(pool),
      new UsageLedger(pool),
      new ConversationLogQueries(pool),
      new ConversationEraser(store),
      new WebhookEndpoints(pool),
      new TenantBudgets(pool),
      turns,
      ingest,
      journal,
    );
  }

  /** Erases the reader's conversation; DomainError not_found when there is none. */
  async conversation(userId: string, conversationId: string, ifMatch?: number): Promise<ErasedConversation> {
    try {
      const erased = await this.eraseAudited(conversationId, userId, { ifMatch });
      if (!erased) throw new DomainError('not_found', 'conversation not found');
      return erased;
    } finally {
      await this.removeJobs();
    }
  }

  /**
   * Erases the book's data and every conversation of the reader's that ever had it as a source;
   * a catalogue book (its publisher's request, checked by the caller) is withdrawn instead.
   */
  async book(userId: string, bookId: string): Promise<ErasureResult> {
    return this.eraseBookAs(await this.repo.begin('book', bookId, userId), userId, bookId);
  }

  private async eraseBookAs(erasureId: string, userId: string, bookId: string): Promise<ErasureResult> {
    if (await this.shelf.isCatalogue(bookId)) return this.withdrawAs(erasureId, bookId);
    const conversations = await this.eraseAll(
      await this.log.conversationsAbout(userId, bookId),
      userId,
      'book',
      erasureId,
    );
    const books = (await this.eraseBook(userId, bookId)) ? 1 : 0;
    await this.complete(erasureId, conversations);
    return { conversations, books };
  }

  /**
   * A catalogue book withdrawn: its data goes as a deleted book's does, but the readers'
   * conversations with it are theirs and stay, and read the withdrawal notice where they quoted it
   * (CatalogueWithdrawal). Audited and journaled as a book erasure; a replay finds the restored
   * book in the catalogue and withdraws it again.
   */
  private async withdrawAs(erasureId: string, bookId: string): Promise<ErasureResult> {
    await this.repo.addPendingJobs([{ queue: BOOK_INGEST_QUEUE, jobId: ingestJobId(bookId) }]);
    const { books, conversations, entry } = await this.withdrawal.withdraw(erasureId, bookId);
    if (conversations) this.logger.log(`book ${bookId} withdrawn: ${conversations} readers' conversations told`);
    await this.journalize(entry);
    await this.removeJobs();
    return { conversations: [], books };
  }

  /**
   * Erases everything of the reader's: conversations, their private books with their uploads, and
   * their name on the ledger. Catalogue books they published are the tenant's and stay, without
   * their id.
   */
  async account(userId: string): Promise<ErasureResult> {
    return this.eraseAccountAs(await this.repo.begin('account', userId, userId), userId);
  }

  private async eraseAccountAs(erasureId: string, userId: string): Promise<ErasureResult> {
    const conversations = await this.eraseAll(await this.log.conversationsOf(userId), userId, 'account', erasureId);
    let books = 0;
    for (const bookId of await this.shelf.privateBookIds(userId)) if (await this.eraseBook(userId, bookId)) books++;
    await this.shelf.forgetPublisher(userId);
    await this.endpoints.deleteOwnedBy(userId); // their URLs, secrets and pending deliveries
    await this.ledger.forgetReader(userId);
    await this.budgets.eraseReader(userId); // their tenant and the budget its admin set them
    await this.complete(erasureId, conversations);
    return { conversations, books };
  }

  /**
   * The worker's periodic pass: erases conversations deleted by a release before erasure (or
   * whose erasure did not run), removes jobs that were still running, and drops snapshots a
   * process saved just after their stream was erased.
   */
  async sweep(): Promise<{
    erased: number;
    lateForks: number;
    jobsLeft: number;
    lateSnapshots: number;
    journaled: number;
    withdrawn: number;
  }> {
    let erased = 0;
    for (const id of await this.log.deletedNotErased(100)) if (await this.eraseAudited(id, null)) erased++;
    let lateForks = 0;
    for (const { conversationId, ownerId, subject } of await this.log.forksOfErased({
      lookback: LATE_FORKS_LOOKBACK,
    })) {
      if (await this.eraseAudited(conversationId, ownerId, { subject })) lateForks++;
    }
    await this.ledger.forgetPastPseudonyms();
    const jobsLeft = await this.jobs.removePending();
    const lateSnapshots = await this.repo.deleteLateSnapshots();
    const journaled = await this.journalPending();
    let withdrawn = 0;
    // a withdrawal is one transaction: one that did not commit left its book in the catalogue
    for (const { id, subjectId } of await this.repo.unfinished('book', UNFINISHED_AFTER)) {
      if (await this.shelf.isCatalogue(subjectId)) withdrawn += (await this.withdrawAs(id, subjectId)).books;
    }
    return { erased, lateForks, jobsLeft, lateSnapshots, journaled, withdrawn };
  }

  /** Whether erasures are journaled (ERASURE_JOURNAL_URL's database, or the one beside DATABASE_URL). */
  get journaling(): boolean {
    return this.journal !== null;
  }

  /**
   * After a restore (docs/operations.md, "Backups and restores"): erases again, through the paths
   * of a reader's request and under the same erasure id, every erasure in the journal that this
   * database does not show completed. Idempotent: an erasure done again is completed here, so a
   * second pass finds nothing to do.
   */
  async replayJournal(onReplayed?: (replayed: ReplayedErasure) => void): Promise<JournalReplay> {
    if (!this.journal)
      throw new Error('no erasure journal: set ERASURE_JOURNAL_URL, or let DATABASE_URL create its own');
    let entries = 0;
    const replayed: ReplayedErasure[] = [];
    for await (const page of this.journal.entries()) {
      entries += page.length;
      const done = await this.repo.completedOf(page.map((e) => e.id));
      for (const entry of page) {
        if (done.has(entry.id)) continue;
        const result = await this.replay(entry);
        replayed.push(result);
        onReplayed?.(result);
      }
    }
    return { entries, replayed };
  }

  private async replay(entry: JournalEntry): Promise<ReplayedErasure> {
    const { id, subject, subjectId, requestedBy } = entry;
    if (subject === 'book' && requestedBy === null)
      return { entry, conversations: 0, books: 0, skipped: 'a book erasure that names no reader' };
    await this.repo.beginReplay(entry);
    switch (subject) {
      case 'conversation': {
        const erased = await this.eraser.erase(subjectId, { userId: requestedBy, subject, erasureId: id });
        await this.complete(id, erased ? [erased] : []);
        return { entry, conversations: erased ? 1 : 0, books: 0 };
      }
      case 'book': {
        const { conversations, books } = await this.eraseBookAs(id, requestedBy!, subjectId);
        return { entry, conversations: conversations.length, books };
      }
      case 'account': {
        const { conversations, books } = await this.eraseAccountAs(id, subjectId);
        return { entry, conversations: conversations.length, books };
      }
      default: {
        const never: never = subject;
        throw new Error(`unknown erasure subject ${String(never)}`);
      }
    }
  }

  /**
   * Journals the completed erasures that are not yet in the journal (one the journal was away
   * for, or every past one when the journal is first set). Returns how many.
   */
  private async journalPending(): Promise<number> {
    if (!this.journal) return 0;
    let n = 0;
    for (let page = 0; page < 20; page++) {
      const entries = await this.repo.unjournaled(500);
      if (entries.length === 0) break;
      await this.journal.append(entries);
      await this.repo.journaled(entries.map((e) => e.id));
      n += entries.length;
    }
    return n;
  }

  /** Best effort at once: what the journal was away for, the sweep journals. */
  private async journalize(entry: JournalEntry | undefined): Promise<void> {
    if (!this.journal || !entry) return;
    try {
      await this.journal.append([entry]);
      await this.repo.journaled([entry.id]);
    } catch (e) {
      this.logger.warn(`erasure ${entry.id} left for the sweep to journal: ${(e as Error).message}`);
    }
  }

  /**
   * One conversation as a request of its own, audited: the record is completed with what went,
   * or dropped when nothing was erased (nothing there, or the erasure failed and rolled back).
   */
  private async eraseAudited(
    conversationId: string,
    userId: string | null,
    { ifMatch, subject = 'conversation' }: { ifMatch?: number; subject?: ErasureSubject } = {},
  ): Promise<ErasedConversation | undefined> {
    const erasureId = await this.repo.begin('conversation', conversationId, userId);
    try {
      const erased = await this.eraser.erase(conversationId, { userId, subject, erasureId, ifMatch });
      if (!erased) {
        await this.repo.discard(erasureId);
        return undefined;
      }
      await this.journalize(await this.repo.complete(erasureId, { streams: 1, events: erased.erasedEvents }));
      return erased;
    } catch (e) {
      await this.repo.discard(erasureId).catch(() => undefined);
      throw e;
    }
  }

  private async eraseAll(
    conversationIds: string[],
    userId: string,
    subject: ErasureSubject,
    erasureId: string,
  ): Promise<ErasedConversation[]> {
    const erased: ErasedConversation[] = [];
    // a fork appended after the list was taken copied what is erased: erase it too, and its forks
    for (let ids = conversationIds; ids.length > 0;) {
      const now: ErasedConversation[] = [];
      for (const id of ids) {
        const done = await this.eraser.erase(id, { userId, subject, erasureId });
        if (done) now.push(done);
      }
      erased.push(...now);
      const sources = now.map((c) => c.conversationId);
      ids = sources.length > 0 ? (await this.log.forksOfErased({ sources })).map((f) => f.conversationId) : [];
    }
    return erased;
  }

  /** The book and what cascades from it (upload, chunks, terms, embeddings, contexts), and its ingest job. */
  private async eraseBook(userId: string, bookId: string): Promise<boolean> {
    await this.repo.addPendingJobs([{ queue: BOOK_INGEST_QUEUE, jobId: ingestJobId(bookId) }]);
    return this.books.delete(userId, bookId);
  }

  private async complete(erasureId: string, conversations: ErasedConversation[]): Promise<void> {
    const events = conversations.reduce((n, c) => n + c.erasedEvents, 0);
    await this.journalize(await this.repo.complete(erasureId, { streams: conversations.length, events }));
    await this.removeJobs();
  }

  /** Best effort now: what is left (a job still running, Redis away) the worker's sweep removes. */
  private async removeJobs(): Promise<void> {
    await this.jobs
      .removePending()
      .catch((e: Error) => this.logger.warn(`erased jobs left for the sweep: ${e.message}`));
  }
}
