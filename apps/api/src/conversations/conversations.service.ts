import { Inject, Injectable, OnModuleDestroy } from '@nestjs/common';
import { randomUUID } from 'node:crypto';
import { invalid, problem } from '../http/problem.exception';
import { AppConfig, CONFIG } from '@parley/config';
import {
  assertVisible,
  BatchVia,
  CommandOptions,
  ConversationEvent,
  ConversationState,
  conversationStreamId,
  fold,
  forkEvents,
  handleCommand,
  initialState,
  PolicyPatch,
  ReaderCommand,
} from '@parley/conversation';
import { priceOf } from '@parley/agent';
import { BookQueries, readerOf } from '@parley/books';
import { ConversationLogQueries } from '@parley/read-models';
import { AppendNotifier, EventStore, StoredEvent } from '@parley/event-store';
import { batchView, BatchView } from './batch-view';
import { ApiConversationFolds, ConversationView, LoadedConversation, toView } from './conversation-view';
import { answerTo, PostBody, postedEventId, postedFields, postIdFor, PostResult } from './post-idempotency';

export type { ConversationView } from './conversation-view';
export type { BatchItemView, BatchView } from './batch-view';
export type { PostBody, PostResult } from './post-idempotency';
export { assertVisible } from '@parley/conversation';

/**
 * A message to post: its body, what to do while a turn runs (?multitask=), and the reader's
 * monthly budget in force (recorded with it: the worker holds each model call to it).
 */
export type PostInput = PostBody & { multitask: 'enqueue' | 'reject' | 'interrupt'; budgetUsdPerMonth?: number };

/** A batch to start: its prompts, how they are answered, and through which API. */
export interface BatchInput {
  prompts: string[];
  mode: 'sequential' | 'independent';
  via?: BatchVia;
  /** the reader's monthly budget in force, recorded with each prompt */
  budgetUsdPerMonth?: number;
}

/**
 * Commands on conversations, each through the one command path (handleCommand: load the fold,
 * decide, append at the folded version; without If-Match a lost race is retried on the new
 * state, with it the client gets 409), and the reads of them.
 */
@Injectable()
export class ConversationsService implements OnModuleDestroy {
  private readonly folds: ApiConversationFolds;

  constructor(
    private readonly store: EventStore,
    private readonly books: BookQueries,
    private readonly log: ConversationLogQueries,
    @Inject(CONFIG) private readonly config: AppConfig,
    private readonly notifier: AppendNotifier,
  ) {
    this.folds = new ApiConversationFolds(store);
    notifier.on('append', this.folds.heard);
  }

  onModuleDestroy(): void {
    this.notifier.off('append', this.folds.heard);
  }

  async load(
    conversationId: string,
    upTo?: number,
  ): Promise<{ state: ConversationState; events: StoredEvent<ConversationEvent>[] }> {
    const events = await this.store.readStream<ConversationEvent>(conversationStreamId(conversationId), { upTo });
    return { state: fold(events, initialState()), events };
  }

  /** The state of a conversation its owner may see; anything else is 404. */
  async view(userId: string, conversationId: string, version?: number): Promise<ConversationView> {
    const now = await this.folds.load(conversationId);
    assertVisible(now.state, userId); // a deleted conversation is gone at every version
    if (version === undefined) return toView(conversationId, now);
    if (now.state.version < version) throw problem('version_not_found', `the conversation has no version ${version}`);
    const { state, events } = await this.load(conversationId, version);
    return toView(conversationId, {
      state,
      createdAt: events[0]?.occurredAt,
      lastActivityAt: events.at(-1)?.occurredAt,
    });
  }

  /** tenant: the caller's token's parley_tenant, whose catalogue's books they may use */
  async start(
    userId: string,
    input: { bookId?: string; bookIds?: string[]; title?: string; readingPosition?: number | null },
    tenant?: string,
  ): Promise<ConversationView> {
    if (input.bookId && input.bookIds && (input.bookIds.length !== 1 || input.bookIds[0] !== input.bookId)) {
      throw invalid('bookIds', 'give bookId (one book) or bookIds, not both');
    }
    const books = await this.booksVisible(userId, tenant, input.bookIds ?? (input.bookId ? [input.bookId] : []));
    const id = randomUUID();
    await this.execute(id, {
      type: 'StartConversation',
      userId,
      bookIds: books.map((b) => b.id),
      title: input.title ?? null,
      readingPosition: input.readingPosition ?? null,
    });
    return this.view(userId, id);
  }

  async update(
    userId: string,
    conversationId: string,
    input: { title?: string; readingPosition?: number | null; policy?: PolicyPatch; bookIds?: string[] },
    ifMatch?: number,
    tenant?: string,
  ): Promise<ConversationView> {
    if (Object.values(input).every((v) => v === undefined)) {
      throw problem('validation_failed', 'nothing to change: give title, readingPosition, bookIds and/or policy', {
        errors: [{ field: 'body', message: 'give title, readingPosition, bookIds and/or policy' }],
      });
    }
    if (input.policy) this.assertPolicyAllowed(input.policy);
    const books = input.bookIds ? await this.booksVisible(userId, tenant, input.bookIds) : undefined;
    await this.execute(
      conversationId,
      [
        ...(input.title !== undefined ? [{ type: 'RenameConversation' as const, userId, title: input.title }] : []),
        ...(input.readingPosition !== undefined
          ? [{ type: 'ChangeReadingPosition' as const, userId, readingPosition: input.readingPosition }]
          : []),
        ...(input.policy !== undefined ? [{ type: 'ChangePolicy' as const, userId, policy: input.policy }] : []),
        ...(books ? [{ type: 'ChangeSources' as const, userId, books }] : []),
      ],
      { ifMatch },
    );
    return this.view(userId, conversationId);
  }

  /** A question's text: not blank, and within MESSAGE_MAX_CHARS. */
  private assertMessageText(text: string, field: string, what: string): void {
    if (text.trim().length === 0) throw invalid(field, `${what} must not be blank`);
    if (text.length > this.config.limits.messageMaxChars)
      throw invalid(field, `${what} must be at most ${this.config.limits.messageMaxChars} characters`);
  }

  /** The limits of a policy that depend on the server: its models and its cap on model calls. */
  private assertPolicyAllowed(policy: PolicyPatch): void {
    const { model, maxIterations } = policy;
    if (typeof model === 'string' && model !== this.config.llm.model && !priceOf(model)) {
      throw invalid('policy.model', `unknown model ${model}: use one the server prices, or ${this.config.llm.model}`);
    }
    if (typeof maxIterations === 'number' && maxIterations > this.config.agent.maxIterations) {
      throw invalid(
        'policy.maxIterations',
        `maxIterations must be at most ${this.config.agent.maxIterations} (AGENT_MAX_ITERATIONS)`,
      );
    }
  }

  async post(
    userId: string,
    conversationId: string,
    input: PostInput,
    opts: { idempotencyKey?: string; ifMatch?: number } & Pick<CommandOptions<LoadedConversation>, 'kept' | 'loaded'>,
  ): Promise<PostResult> {
    this.assertMessageText(input.content, 'content', 'content');
    // with an Idempotency-Key the ids are derived from it: a repeat finds (or races to) the same events.
    // Callers look for an earlier post first (earlierPost, before the rate limiter); one that
    // lands here anyway, racing or not, ends with the first answer or a 422 below.
    const key = opts.idempotencyKey;
    const idFor = key ? postIdFor(userId, conversationId, key) : () => randomUUID();
    const messageId = idFor('message');
    const turnId = idFor('turn');
    try {
      const appended = await this.execute(
        conversationId,
        {
          type: 'PostUserMessage',
          userId,
          messageId,
          turnId,
          multitask: input.multitask,
          ...postedFields(input),
          ...(input.budgetUsdPerMonth !== undefined ? { budgetUsdPerMonth: input.budgetUsdPerMonth } : {}),
        },
        {
          ifMatch: opts.ifMatch,
          eventId: (e) => idFor(`event:${e.type}:${'turnId' in e.data ? e.data.turnId : ''}`),
          correlationId: turnId,
          loaded: opts.loaded,
          kept: opts.kept,
        },
      );
      // a concurrent post with this key won the race: the store answers with its events
      const posted = answerTo(
        input,
        appended.find((e) => e.type === 'UserMessagePosted')!,
      );
      const interrupted = appended.filter((e) => e.type === 'TurnCancelled').map((e) => e.data.turnId);
      return { ...posted, interrupted };
    } catch (e) {
      const earlier = key ? await this.earlierPost(userId, conversationId, key, input) : undefined;
      if (earlier) return earlier; // a concurrent repeat of this post won the race
      throw e;
    }
  }

  /**
   * Starts a batch of prompts: `sequential` posts them as this conversation's next turns, in
   * order (each sees the answers before it); `independent` forks the conversation once per
   * prompt at its current version and posts the prompt there, so each is answered against the
   * same history, concurrently, and this conversation's own history stays as it was. Either way
   * BatchStarted goes to this conversation. Returns the turns to enqueue.
   */
  async startBatch(
    userId: string,
    conversationId: string,
    input: BatchInput,
  ): Promise<{ batchId: string; turns: Array<{ conversationId: string; turnId: string }> }> {
    const via = input.via ?? 'messages';
    if (via === 'message-batches' && input.mode !== 'independent')
      throw invalid(
        'via',
        'message-batches answers independent batches only: a sequential turn waits on the one before',
      );
    if (via === 'message-batches' && this.config.llm.provider !== 'anthropic')
      throw invalid(
        'via',
        `message-batches needs the anthropic provider (this server runs ${this.config.llm.provider})`,
      );
    // all of them before anything is recorded: an independent batch forks a conversation per prompt
    input.prompts.forEach((p, i) => this.assertMessageText(p, `prompts.${i}`, 'a prompt'));
    const { state } = await this.folds.load(conversationId);
    assertVisible(state, userId);
    const batchId = randomUUID();
    const items =
      input.mode === 'sequential'
        ? input.prompts.map((prompt) => ({ prompt, conversationId, turnId: randomUUID(), messageId: randomUUID() }))
        : await Promise.all(
            input.prompts.map(async (prompt) => {
              const fork = await this.fork(userId, conversationId, state.version);
              const posted = await this.post(
                userId,
                fork.id,
                {
                  content: prompt,
                  multitask: 'enqueue',
                  batch: { batchId, conversationId, ...(via === 'message-batches' ? { via } : {}) },
                  budgetUsdPerMonth: input.budgetUsdPerMonth,
                },
                {},
              );
              return { prompt, conversationId: fork.id, turnId: posted.turnId, messageId: posted.messageId };
            }),
          );
    const budgetUsdPerMonth = input.budgetUsdPerMonth;
    await this.execute(conversationId, {
      type: 'StartBatch',
      userId,
      batchId,
      mode: input.mode,
      via,
      items,
      ...(budgetUsdPerMonth !== undefined ? { budgetUsdPerMonth } : {}),
    });
    return { batchId, turns: items.map(({ conversationId: c, turnId }) => ({ conversationId: c, turnId })) };
  }

  /** A batch as it stands: each prompt's answer (from the log) and the batch's figures. */
  async batch(userId: string, conversationId: string, batchId: string): Promise<BatchView> {
    const { state } = await this.folds.load(conversationId);
    assertVisible(state, userId);
    const batch = state.batches[batchId];
    if (!batch) throw problem('batch_not_found', `the conversation has no batch ${batchId}`);
    return batchView(batchId, batch, await this.log.turnEndings(batch.items));
  }

  /** A new conversation whose history is the source's events 1..version; turns left open there end cancelled. */
  async fork(userId: string, sourceId: string, version: number): Promise<ConversationView> {
    const { state: now, events: history } = await this.load(sourceId);
    assertVisible(now, userId);
    if (version > now.version) throw invalid('version', `version must be at most ${now.version}`);
    const id = randomUUID();
    const events = forkEvents({ conversationId: sourceId, history }, version, randomUUID, { userId });
    await this.store.append(conversationStreamId(id), events, { expectedVersion: 'no_stream' });
    return this.view(userId, id);
  }

  async cancelTurn(userId: string, conversationId: string, turnId: string): Promise<StoredEvent<ConversationEvent>[]> {
    return this.execute(conversationId, { type: 'CancelTurn', userId, turnId }, { correlationId: turnId });
  }

  /**
   * The conversation a command is about to be decided on: as kept, when this process keeps it
   * (see CommandOptions.kept), else its read, begun now (CommandOptions.loaded).
   */
  foldForCommand(conversationId: string): Pick<CommandOptions<LoadedConversation>, 'kept' | 'loaded'> {
    const kept = this.folds.kept(conversationId);
    return kept ? { kept } : { loaded: this.folds.load(conversationId) };
  }

  /** Decides the commands on the same state (the one command path) and appends their events atomically. */
  async execute(
    conversationId: string,
    commands: ReaderCommand | ReaderCommand[],
    opts: CommandOptions<LoadedConversation> = {},
  ): Promise<StoredEvent<ConversationEvent>[]> {
    const all = Array.isArray(commands) ? commands : [commands];
    const { events } = await handleCommand(this.store, this.folds, conversationId, all, opts);
    this.folds.appended(conversationId, events); // its next command here starts from them, whenever they are announced
    return events;
  }

  /**
   * The first answer to a post made with this Idempotency-Key, if there was one; 422 when that
   * post had another body (the IETF Idempotency-Key draft's rule).
   */
  async earlierPost(
    userId: string,
    conversationId: string,
    key: string,
    input: PostBody,
  ): Promise<PostResult | undefined> {
    const posted = await this.log.findPost(
      userId,
      conversationId,
      postedEventId(postIdFor(userId, conversationId, key)),
    );
    return posted && answerTo(input, posted);
  }

  /**
   * The caller's ready books (their own or their tenant's catalogue), in the order given: 404 for
   * one they may not see, 409 for one not ready.
   */
  private async booksVisible(
    userId: string,
    tenant: string | undefined,
    bookIds: string[],
  ): Promise<Array<{ id: string; title: string }>> {
    if (bookIds.length === 0) return [];
    const found = new Map((await this.books.titlesVisibleTo(readerOf(userId, tenant), bookIds)).map((b) => [b.id, b]));
    return bookIds.map((id) => {
      const book = found.get(id);
      if (!book) throw problem('book_not_found', `book ${id} not found`);
      if (book.status !== 'ready')
        throw problem(
          'book_not_ready',
          book.status === 'failed'
            ? `book ${id} failed to ingest: upload it again`
            : `book ${id} is still being ingested: try again when GET /v1/books/{id} says ready`,
        );
      return { id: book.id, title: book.title };
    });
  }
}
