import { Inject, Injectable } from '@nestjs/common';
import { randomUUID } from 'node:crypto';
import { invalid, problem } from '../http/problem.exception';
import { AppConfig, CONFIG } from '@parley/config';
import {
  ReaderCommand,
  ConversationEvent,
  ConversationState,
  conversationStreamId,
  decide,
  DomainError,
  evolve,
  fold,
  initialState,
  PolicyPatch,
  AssistantReplied,
  BatchLink,
  BatchVia,
  Usage,
} from '@parley/conversation';
import { priceOf, roundUsd } from '@parley/agent';
import { BooksRepository } from '@parley/books';
import { ConversationLogQueries, StoredPost } from '@parley/read-models';
import {
  deterministicId,
  eventOf,
  EventStore,
  ExpectedVersion,
  FoldSnapshots,
  NewEvent,
  SNAPSHOT_SPAN_EVENTS,
  StoredEvent,
  StreamFoldCache,
  traceMetadata,
  WrongExpectedVersionError,
} from '@parley/event-store';

/** A conversation as GET /conversations/:id shows it: the folded state plus its id and times. */
export type ConversationView = { id: string } & Pick<
  ConversationState,
  'bookId' | 'bookIds' | 'title' | 'readingPosition' | 'forkedFrom' | 'policy' | 'version' | 'messageCount' | 'turns'
> & { createdAt: string | null; lastActivityAt: string | null };

/** A post's body: what a repeat with the same Idempotency-Key must carry again. */
export interface PostBody {
  content: string;
  selectedText?: string;
  /** set by a batch's independent prompts, not by clients */
  batch?: BatchLink;
}

export interface PostResult {
  messageId: string;
  turnId: string;
  version: number;
  position: string;
  /** turns this post cancelled (multitask=interrupt); not part of the response */
  interrupted?: string[];
}

const CONFLICT_RETRIES = 5;

/**
 * Commands on conversations: load the stream, fold, decide, append at the folded version.
 * Without If-Match a lost race is retried on the new state; with it the client gets 409.
 */
@Injectable()
export class ConversationsService {
  /**
   * Each conversation's state, kept between requests: a post or a read of the conversation reads
   * only the events appended since the last, not the whole conversation. Small per conversation
   * (no message text), so many are kept.
   */
  private readonly folds: StreamFoldCache<ConversationEvent, FoldedConversation>;

  constructor(
    private readonly store: EventStore,
    private readonly books: BooksRepository,
    private readonly log: ConversationLogQueries,
    @Inject(CONFIG) private readonly config: AppConfig,
  ) {
    this.folds = new StreamFoldCache(store, conversationFold, 10_000, new FoldSnapshots(store.pool));
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
    const { state: now } = await this.folds.load(conversationStreamId(conversationId));
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

  async start(
    userId: string,
    input: { bookId?: string; bookIds?: string[]; title?: string; readingPosition?: number | null },
  ): Promise<ConversationView> {
    if (input.bookId && input.bookIds && (input.bookIds.length !== 1 || input.bookIds[0] !== input.bookId)) {
      throw invalid('bookIds', 'give bookId (one book) or bookIds, not both');
    }
    const books = await this.booksVisible(userId, input.bookIds ?? (input.bookId ? [input.bookId] : []));
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
  ): Promise<ConversationView> {
    if (Object.values(input).every((v) => v === undefined)) {
      throw problem('validation_failed', 'nothing to change: give title, readingPosition, bookIds and/or policy', {
        errors: [{ field: 'body', message: 'give title, readingPosition, bookIds and/or policy' }],
      });
    }
    if (input.policy) this.assertPolicyAllowed(input.policy);
    const books = input.bookIds ? await this.booksVisible(userId, input.bookIds) : undefined;
    await this.executeMany(
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
    input: PostBody & { multitask: 'enqueue' | 'reject' | 'interrupt' },
    opts: { idempotencyKey?: string; ifMatch?: number },
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
        { type: 'PostUserMessage', userId, messageId, turnId, multitask: input.multitask, ...pick(input) },
        {
          ifMatch: opts.ifMatch,
          eventId: (e) => idFor(`event:${e.type}:${'turnId' in e.data ? e.data.turnId : ''}`),
          correlationId: turnId,
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
    input: { prompts: string[]; mode: 'sequential' | 'independent'; via?: BatchVia },
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
    const { state } = (await this.folds.load(conversationStreamId(conversationId))).state;
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
                },
                {},
              );
              return { prompt, conversationId: fork.id, turnId: posted.turnId, messageId: posted.messageId };
            }),
          );
    await this.execute(conversationId, { type: 'StartBatch', userId, batchId, mode: input.mode, via, items });
    return { batchId, turns: items.map(({ conversationId: c, turnId }) => ({ conversationId: c, turnId })) };
  }

  /** A batch as it stands: each prompt's answer (from the log) and the batch's figures. */
  async batch(userId: string, conversationId: string, batchId: string): Promise<BatchView> {
    const { state } = (await this.folds.load(conversationStreamId(conversationId))).state;
    assertVisible(state, userId);
    const batch = state.batches[batchId];
    if (!batch) throw problem('batch_not_found', `the conversation has no batch ${batchId}`);
    const endings = await this.log.turnEndings(batch.items);
    const items = batch.items.map((item) => batchItemView(item, endings.get(`${item.conversationId}/${item.turnId}`)));
    const answered = items.filter((i) => i.status === 'replied');
    return {
      batchId,
      mode: batch.mode,
      via: batch.via,
      status: !batch.completed ? 'running' : answered.length === 0 ? 'failed' : 'completed',
      items,
      metrics: batchMetrics(items),
    };
  }

  /** A new conversation whose history is the source's events 1..version; turns left open there end cancelled. */
  async fork(userId: string, sourceId: string, version: number): Promise<ConversationView> {
    const { state: now, events: all } = await this.load(sourceId);
    assertVisible(now, userId);
    if (version > now.version) throw invalid('version', `version must be at most ${now.version}`);
    const history = all.slice(0, version);
    const atFork = fold(history);
    const first = history[0];
    if (first.type !== 'ConversationStarted') throw new Error(`stream of ${sourceId} starts with ${first.type}`);
    const start = first.data;
    const id = randomUUID();
    const metadata = { userId, causationId: history[version - 1].id };
    const events: NewEvent<ConversationEvent>[] = [
      {
        id: randomUUID(),
        type: 'ConversationStarted',
        data: { ...start, forkedFrom: { conversationId: sourceId, version } },
        metadata,
      },
      ...history
        .slice(1)
        .map((e) => ({ ...eventOf(e), id: randomUUID(), metadata: { ...e.metadata, causationId: e.id } })),
      ...atFork.turns
        .filter((t) => t.status === 'pending')
        .map((t) => ({ id: randomUUID(), type: 'TurnCancelled' as const, data: { turnId: t.turnId }, metadata })),
    ];
    await this.store.append(conversationStreamId(id), events, { expectedVersion: 'no_stream' });
    return this.view(userId, id);
  }

  async cancelTurn(userId: string, conversationId: string, turnId: string): Promise<StoredEvent<ConversationEvent>[]> {
    return this.execute(conversationId, { type: 'CancelTurn', userId, turnId }, { correlationId: turnId });
  }

  async execute(
    conversationId: string,
    command: ReaderCommand,
    opts: { ifMatch?: number; eventId?: (e: ConversationEvent) => string; correlationId?: string } = {},
  ): Promise<StoredEvent<ConversationEvent>[]> {
    return this.executeMany(conversationId, [command], opts);
  }

  /** Decides every command on the same state and appends their events atomically. */
  async executeMany(
    conversationId: string,
    commands: ReaderCommand[],
    opts: { ifMatch?: number; eventId?: (e: ConversationEvent) => string; correlationId?: string } = {},
  ): Promise<StoredEvent<ConversationEvent>[]> {
    const streamId = conversationStreamId(conversationId);
    for (let attempt = 0; ; attempt++) {
      const { state } = (await this.folds.load(streamId)).state;
      if (opts.ifMatch !== undefined && state.status === 'active' && state.version !== opts.ifMatch) {
        if (commands.every((c) => c.type !== 'StartConversation')) assertVisible(state, commands[0].userId);
        throw new WrongExpectedVersionError(streamId, opts.ifMatch, state.version);
      }
      let s = state;
      const decided: ConversationEvent[] = [];
      for (const command of commands) {
        for (const event of decide(command, s)) {
          decided.push(event);
          s = fold([event], s);
        }
      }
      if (decided.length === 0) return [];
      const expected: ExpectedVersion = state.status === 'none' ? 'no_stream' : state.version;
      const userId = commands[0].userId;
      const events: NewEvent<ConversationEvent>[] = decided.map((e) => ({
        ...e,
        id: opts.eventId?.(e) ?? randomUUID(),
        // the span it was written under: a turn's later work (another worker, a resume) joins its trace
        metadata: { userId, ...(opts.correlationId ? { correlationId: opts.correlationId } : {}), ...traceMetadata() },
      }));
      try {
        return (await this.store.append(streamId, events, { expectedVersion: expected })).events;
      } catch (e) {
        const retry =
          e instanceof WrongExpectedVersionError && opts.ifMatch === undefined && attempt < CONFLICT_RETRIES;
        if (!retry) throw e;
      }
    }
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
    const idFor = postIdFor(userId, conversationId, key);
    const posted = await this.log.findPost(userId, conversationId, idFor(`event:UserMessagePosted:${idFor('turn')}`));
    return posted && answerTo(input, posted);
  }

  /** 404 for no such book of the user's; 409 for one still ingesting or failed (nothing to search yet). */
  /** The caller's ready books, in the order given: 404 for one that is not theirs, 409 for one not ready. */
  private async booksVisible(userId: string, bookIds: string[]): Promise<Array<{ id: string; title: string }>> {
    if (bookIds.length === 0) return [];
    const found = new Map((await this.books.titlesIfOwnedBy(userId, bookIds)).map((b) => [b.id, b]));
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

/** Ids of a post's message, turn and events, derived from its Idempotency-Key. */
function postIdFor(userId: string, conversationId: string, key: string): (what: string) => string {
  return (what) => deterministicId(userId, conversationId, key, what);
}

/**
 * The answer to `input` given the stored UserMessagePosted of its Idempotency-Key. The event
 * holds the whole body, so comparing its fields needs no stored hash, also for old events.
 */
function answerTo(input: PostBody, posted: StoredPost): PostResult {
  const data = posted.data;
  if (data.content !== input.content || data.selectedText !== input.selectedText) {
    throw problem(
      'idempotency_key_reused',
      'this Idempotency-Key was used for a message with another body: send a new message with a new key',
    );
  }
  return { messageId: data.messageId, turnId: data.turnId, version: posted.version, position: posted.position };
}

function pick(input: PostBody) {
  return {
    content: input.content,
    ...(input.selectedText !== undefined ? { selectedText: input.selectedText } : {}),
    ...(input.batch ? { batch: input.batch } : {}),
  };
}

export interface BatchItemView {
  prompt: string;
  conversationId: string;
  turnId: string;
  status: 'pending' | 'replied' | 'failed' | 'cancelled';
  answer?: string;
  citations?: unknown[];
  usage?: Usage;
  costUsd?: number;
  latencyMs?: number;
}

export interface BatchView {
  batchId: string;
  mode: 'sequential' | 'independent';
  via: BatchVia;
  status: 'running' | 'completed' | 'failed';
  items: BatchItemView[];
  /** the items' usage summed, with their price and latency */
  metrics: { turns: number; failures: number } & Usage & {
      costUsd: number;
      latencyMsP50: number | null;
      latencyMsP95: number | null;
    };
}

function batchItemView(
  item: { prompt: string; conversationId: string; turnId: string },
  ending: { type: string; data: Record<string, unknown> } | undefined,
): BatchItemView {
  const base = { prompt: item.prompt, conversationId: item.conversationId, turnId: item.turnId };
  if (!ending) return { ...base, status: 'pending' };
  if (ending.type === 'AssistantReplied') {
    const d = ending.data as unknown as AssistantReplied['data'];
    return {
      ...base,
      status: 'replied',
      answer: d.content,
      citations: d.citations,
      usage: d.usage,
      costUsd: d.costUsd,
      latencyMs: d.latencyMs,
    };
  }
  return { ...base, status: ending.type === 'TurnFailed' ? 'failed' : 'cancelled' };
}

function batchMetrics(items: BatchItemView[]): BatchView['metrics'] {
  const sum = (f: (u: Usage) => number) => items.reduce((n, i) => n + (i.usage ? f(i.usage) : 0), 0);
  const latencies = items.flatMap((i) => (i.latencyMs === undefined ? [] : [i.latencyMs])).sort((a, b) => a - b);
  const at = (q: number) =>
    latencies.length ? latencies[Math.min(latencies.length - 1, Math.ceil(q * latencies.length) - 1)] : null;
  return {
    turns: items.length,
    failures: items.filter((i) => i.status === 'failed').length,
    inputTokens: sum((u) => u.inputTokens),
    outputTokens: sum((u) => u.outputTokens),
    cacheReadInputTokens: sum((u) => u.cacheReadInputTokens),
    cacheCreationInputTokens: sum((u) => u.cacheCreationInputTokens),
    costUsd: roundUsd(items.reduce((n, i) => n + (i.costUsd ?? 0), 0)),
    latencyMsP50: at(0.5),
    latencyMsP95: at(0.95),
  };
}

export function assertVisible(state: ConversationState, userId: string): void {
  if (state.status !== 'active' || state.ownerId !== userId)
    throw new DomainError('not_found', 'conversation not found');
}

/** What a conversation's view needs: the decision state and when it began and last moved. */
interface FoldedConversation {
  state: ConversationState;
  createdAt?: Date;
  lastActivityAt?: Date;
}

/** What the API keeps of a conversation; a new replica starts a long one from its latest snapshot. */
const conversationFold = {
  // raise the version with any change to what evolve keeps: older snapshots are then not read
  snapshots: { id: 'api-conversation/v1', every: SNAPSHOT_SPAN_EVENTS },
  initial: (): FoldedConversation => ({ state: initialState() }),
  evolve: (f: FoldedConversation, e: StoredEvent<ConversationEvent>): FoldedConversation => ({
    state: evolve(f.state, e),
    createdAt: f.createdAt ?? e.occurredAt,
    lastActivityAt: e.occurredAt,
  }),
};

function toView(id: string, { state, createdAt, lastActivityAt }: FoldedConversation): ConversationView {
  return {
    id,
    bookId: state.bookId,
    bookIds: state.bookIds,
    title: state.title,
    readingPosition: state.readingPosition,
    forkedFrom: state.forkedFrom,
    policy: state.policy,
    version: state.version,
    messageCount: state.messageCount,
    turns: state.turns,
    createdAt: createdAt?.toISOString() ?? null,
    lastActivityAt: lastActivityAt?.toISOString() ?? null,
  };
}
