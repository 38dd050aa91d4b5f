import { Inject, Injectable, Logger } from '@nestjs/common';
import { randomUUID } from 'node:crypto';
import { Pool } from 'pg';
import {
  addUsage,
  buildHistory,
  ChatResult,
  citationStartFor,
  citedPassages,
  costUsd,
  isAbort,
  LLM_CLIENT,
  LlmClient,
  LlmError,
  LlmMessage,
  LlmToolSpec,
  NextStep,
  nextRetrievalStep,
  nextStep,
  RetrievalStep,
  renderPrompt,
  ToolContext,
  ToolRegistry,
  TurnRecord,
  turnsOf,
  zeroUsage,
} from '@parley/agent';
import { AppConfig, CONFIG } from '@parley/config';
import { ConversationEvent, ConversationEventType, conversationStreamId, fold } from '@parley/conversation';
import {
  backoffMs,
  EventStore,
  isTransientDbError,
  NewEvent,
  StoredEvent,
  WrongExpectedVersionError,
} from '@parley/event-store';
import { LiveDeltas } from '@parley/platform';
import { MemoryStepKeeper, StepKeeper } from './step-keeper';

export type TurnOutcome = { kind: 'ended' } | { kind: 'wait'; forTurnId: string };

const DB_RETRY_MAX_MS = 2_000;

/** The worker is stopping before the turn ended: its job goes back to the queue for another worker. */
export class TurnHandedBack extends Error {
  constructor(turnId: string) {
    super(`turn ${turnId} handed back: this worker is stopping`);
    this.name = 'TurnHandedBack';
  }
}

/** Which step of which turn: the key a kept answer is filed under. */
export function stepKey(turn: TurnRecord, step: { kind: string; iteration?: number }): string {
  const iteration = step.kind === 'answer' ? turn.iterations.length + 1 : (step.iteration ?? 1);
  return `${turn.turnId}/${step.kind}/${iteration}`;
}

function abortableSleep(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    const done = () => {
      clearTimeout(timer);
      signal.removeEventListener('abort', done);
      resolve();
    };
    const timer = setTimeout(done, ms);
    signal.addEventListener('abort', done, { once: true });
  });
}

interface Loaded {
  events: StoredEvent<ConversationEvent>[];
  version: number;
  turns: TurnRecord[];
  turn: TurnRecord | undefined;
  ctx: ToolContext;
  deleted: boolean;
}

/**
 * Runs one agent turn as a fold of its conversation's stream: load, fold, do the next step,
 * append it at the folded version, repeat. Whatever crashed before, the log says where to go on;
 * a worker that loses an append race re-reads and finds the turn moved on (or ended).
 */
@Injectable()
export class AgentTurnRunner {
  private readonly logger = new Logger(AgentTurnRunner.name);
  private readonly bookNames = new Map<string, string>();

  constructor(
    private readonly store: EventStore,
    @Inject(Pool) private readonly pool: Pool,
    @Inject(LLM_CLIENT) private readonly llm: LlmClient,
    private readonly tools: ToolRegistry,
    private readonly deltas: LiveDeltas,
    @Inject(CONFIG) private readonly config: AppConfig,
  ) {}

  async run(
    conversationId: string,
    turnId: string,
    signal: AbortSignal,
    keeper: StepKeeper = new MemoryStepKeeper(),
  ): Promise<TurnOutcome> {
    let outage = { tries: 0, since: 0 }; // consecutive transient database errors
    for (;;) {
      try {
        const s = await this.load(conversationId, turnId, signal);
        const step = s.deleted
          ? ({ kind: 'ended' } as const)
          : this.alwaysRetrieve(s)
            ? nextRetrievalStep(s.turns, turnId)
            : nextStep(s.turns, turnId, this.config.agent.maxIterations);
        if (step.kind === 'ended' || step.kind === 'wait') return step;
        // aborted, yet the log shows no ending: this worker is stopping; the job goes back to the queue
        if (signal.aborted) throw new TurnHandedBack(turnId);
        const key = stepKey(s.turn!, step);
        const kept = keeper.kept?.step === key ? keeper.kept.events : undefined;
        const events = kept ?? (await this.perform(s, step, conversationId, signal, keeper, key));
        await this.append(conversationId, s.version, events);
        outage = { tries: 0, since: 0 };
      } catch (e) {
        // the stream moved on (a follow-up message, a rename): re-read; a kept answer is appended at the new version
        if (e instanceof WrongExpectedVersionError) continue;
        if (isTransientDbError(e)) {
          if (outage.tries++ === 0) outage.since = Date.now();
          await this.waitOutOutage(e, outage, turnId, signal);
          continue;
        }
        if (e instanceof TurnHandedBack) throw e;
        if (isAbort(e) || signal.aborted) continue; // the next load sees TurnCancelled (or hands the turn back)
        if (e instanceof LlmError) {
          await this.fail(conversationId, turnId, e.code, e.message, e.retryable);
          continue;
        }
        throw e;
      }
    }
  }

  /** Does one step; a step that called the model is kept before anything else can go wrong. */
  private async perform(
    s: Loaded,
    step: Exclude<NextStep | RetrievalStep, { kind: 'ended' } | { kind: 'wait' }>,
    conversationId: string,
    signal: AbortSignal,
    keeper: StepKeeper,
    key: string,
  ): Promise<NewEvent<ConversationEvent>[]> {
    if (step.kind === 'run-tools') return this.runTools(s, step.calls);
    const events =
      step.kind === 'call-llm'
        ? await this.callLlm(s, step.iteration, step.allowTools, conversationId, signal)
        : step.kind === 'reformulate'
          ? await this.reformulate(s, signal)
          : await this.answerFromPassages(s, conversationId, signal);
    await keeper.keep({ step: key, events });
    return events;
  }

  /** Postgres is away: back off and try again, holding the turn (its job lock lives in Redis). */
  private async waitOutOutage(
    e: unknown,
    outage: { tries: number; since: number },
    turnId: string,
    signal: AbortSignal,
  ): Promise<void> {
    if (signal.aborted) throw new TurnHandedBack(turnId); // stopping: a retry elsewhere finds the kept answer
    if (outage.tries === 1)
      this.logger.warn(`turn ${turnId}: database unavailable, retrying (${(e as Error).message})`);
    if (Date.now() - outage.since > this.config.worker.dbOutageMaxMs) throw e; // BullMQ retries the job later
    await abortableSleep(backoffMs(outage.tries, DB_RETRY_MAX_MS), signal);
  }

  /** Records TurnFailed unless the turn already ended. */
  async fail(conversationId: string, turnId: string, code: string, message: string, retryable: boolean): Promise<void> {
    for (let attempt = 0; attempt < 5; attempt++) {
      const events = await this.store.readStream<ConversationEvent>(conversationStreamId(conversationId));
      const turn = turnsOf(events).find((t) => t.turnId === turnId);
      if (!turn || turn.ending) return;
      try {
        await this.append(conversationId, events.length ? events[events.length - 1].version : 0, [
          this.event(events, turnId, 'TurnFailed', { turnId, code, message: message.slice(0, 1000), retryable }),
        ]);
        this.logger.warn(`turn ${turnId} failed: ${code} ${message}`);
        return;
      } catch (e) {
        if (!(e instanceof WrongExpectedVersionError)) throw e;
      }
    }
  }

  private async load(conversationId: string, turnId: string, signal: AbortSignal): Promise<Loaded> {
    const events = await this.store.readStream<ConversationEvent>(conversationStreamId(conversationId));
    const state = fold(events);
    const turns = turnsOf(events);
    return {
      events,
      version: state.version,
      turns,
      turn: turns.find((t) => t.turnId === turnId),
      deleted: state.status !== 'active',
      ctx: {
        userId: state.ownerId ?? '',
        conversationId,
        bookId: state.bookId,
        readingPosition: state.readingPosition,
        signal,
      },
    };
  }

  /** Every pending call of the iteration, in parallel; results recorded together, in call order. */
  private async runTools(
    s: Loaded,
    calls: Array<{ toolUseId: string; name: string; input: unknown }>,
  ): Promise<NewEvent<ConversationEvent>[]> {
    const turn = s.turn!;
    const outputs = await Promise.all(
      calls.map(async (c) => {
        const citationStart = citationStartFor(turn, c.toolUseId);
        const out = await this.tools.run(c.name, c.input, { ...s.ctx, citationStart });
        return { c, out, citationStart };
      }),
    );
    return outputs.map(({ c, out, citationStart }) =>
      this.event(s.events, turn.turnId, 'ToolResultRecorded', {
        turnId: turn.turnId,
        toolUseId: c.toolUseId,
        content: out.content,
        isError: out.isError ?? false,
        ...(out.chunks ? { chunks: out.chunks, citationStart } : {}),
      }),
    );
  }

  private async callLlm(
    s: Loaded,
    iteration: number,
    allowTools: boolean,
    conversationId: string,
    signal: AbortSignal,
  ): Promise<NewEvent<ConversationEvent>[]> {
    const { messages, prefixEnd } = buildHistory(s.turns, s.turn!.turnId, this.config.agent.contextTokens);
    return this.reply(
      s,
      conversationId,
      signal,
      messages,
      prefixEnd,
      this.tools.specsFor(s.ctx),
      iteration,
      allowTools,
    );
  }

  /** One LLM call: tool calls become ToolInvoked events, a text answer ends the turn. */
  private async reply(
    s: Loaded,
    conversationId: string,
    signal: AbortSignal,
    messages: LlmMessage[],
    prefixEnd: number,
    tools: LlmToolSpec[],
    iteration: number,
    allowTools = false,
  ): Promise<NewEvent<ConversationEvent>[]> {
    const turn = s.turn!;
    // index counts within one attempt of one LLM call: a client joins the texts of the last attempt
    let index = 0;
    let currentAttempt = 1;
    const result: ChatResult = await this.llm.chatWithTools(messages, tools, {
      system: await this.systemPrompt(s),
      prefixEnd,
      toolChoice: allowTools ? 'auto' : 'none',
      signal,
      onTextDelta: (text, attempt = 1) => {
        if (attempt !== currentAttempt) [currentAttempt, index] = [attempt, 0];
        this.deltas
          .publish(conversationId, { turnId: turn.turnId, iteration, attempt, index: index++, text })
          .catch(() => undefined);
      },
    });
    const text = result.content.flatMap((b) => (b.type === 'text' ? [b.text] : [])).join('');
    const toolUses = allowTools ? result.content.filter((b) => b.type === 'tool_use') : [];
    if (toolUses.length > 0) {
      return toolUses.map((b, i) =>
        this.event(s.events, turn.turnId, 'ToolInvoked', {
          turnId: turn.turnId,
          toolUseId: b.id,
          name: b.name,
          input: b.input,
          iteration,
          ...(i === 0
            ? {
                assistantText: text,
                assistantContent: result.content.map((c) =>
                  c.type === 'text'
                    ? { type: 'text' as const, text: c.text }
                    : { type: 'tool_use' as const, toolUseId: c.id },
                ),
                usage: result.usage,
                model: result.model,
              }
            : {}),
        }),
      );
    }
    const usage = turn.iterations.reduce((sum, it) => (it.usage ? addUsage(sum, it.usage) : sum), zeroUsage());
    const total = addUsage(usage, result.usage);
    const citations = citedPassages(text, turn);
    const content = text.trim() ? text : '(no answer)';
    return [
      this.event(s.events, turn.turnId, 'AssistantReplied', {
        turnId: turn.turnId,
        messageId: randomUUID(),
        content,
        model: result.model,
        stopReason: result.stopReason,
        usage: total,
        costUsd: costUsd(result.model, total),
        citations,
        isFromBook: citations.length > 0,
        iterations: iteration,
        latencyMs: Date.now() - turn.postedAt.getTime(),
      }),
    ];
  }

  /** Providers without tool use (or LLM_RETRIEVAL_MODE=always-retrieve) search first, then answer. */
  private alwaysRetrieve(s: Loaded): boolean {
    if (!s.ctx.bookId || !this.tools.specsFor(s.ctx).some((t) => t.name === 'search_book')) return false;
    const mode = this.config.llm.retrievalMode;
    return mode === 'always-retrieve' || (mode === 'auto' && !this.llm.supportsTools);
  }

  /** Turns the question into one self-contained query, recorded as the turn's search_book call. */
  private async reformulate(s: Loaded, signal: AbortSignal): Promise<NewEvent<ConversationEvent>[]> {
    const turn = s.turn!;
    const earlier = s.turns.slice(0, s.turns.indexOf(turn)).slice(-3);
    const conversation = earlier
      .flatMap((t) => [
        `Reader: ${t.content}`,
        ...(t.ending?.type === 'AssistantReplied' ? [`You: ${t.ending.content}`] : []),
      ])
      .join('\n');
    const prompt = renderPrompt('reformulation_prompt', {
      book: await this.bookName(s),
      conversation: conversation || '(none)',
      question: turn.content,
    });
    const result = await this.llm.chatWithTools([{ role: 'user', content: [{ type: 'text', text: prompt }] }], [], {
      system: 'You write search queries.',
      maxTokens: 200,
      signal,
    });
    const query =
      result.content
        .flatMap((b) => (b.type === 'text' ? [b.text] : []))
        .join(' ')
        .split('\n')[0]
        .trim()
        .slice(0, 500) || turn.content.slice(0, 500);
    return [
      this.event(s.events, turn.turnId, 'ToolInvoked', {
        turnId: turn.turnId,
        toolUseId: `retrieve_${randomUUID()}`,
        name: 'search_book',
        input: { query },
        iteration: 1,
        usage: result.usage,
        model: result.model,
      }),
    ];
  }

  /** The answer with the retrieved passages in the prompt, no tools offered. */
  private async answerFromPassages(
    s: Loaded,
    conversationId: string,
    signal: AbortSignal,
  ): Promise<NewEvent<ConversationEvent>[]> {
    const turn = s.turn!;
    const passages = turn.iterations.flatMap((it) => [...it.results.values()].map((r) => r.content)).join('\n\n');
    const currentMessages = [
      {
        role: 'user' as const,
        content: [
          ...(turn.selectedText
            ? [
                {
                  type: 'text' as const,
                  text: `The reader highlighted this passage:\n<selected_text>\n${turn.selectedText}\n</selected_text>`,
                },
              ]
            : []),
          { type: 'text' as const, text: renderPrompt('always_retrieve_answer', { passages, question: turn.content }) },
        ],
      },
    ];
    const { messages, prefixEnd } = buildHistory(s.turns, turn.turnId, this.config.agent.contextTokens, {
      withTools: false,
      currentMessages,
    });
    return this.reply(s, conversationId, signal, messages, prefixEnd, [], turn.iterations.length + 1);
  }

  /** The book's title and author, read once per book: every LLM call of every turn needs it. */
  private async bookName(s: Loaded): Promise<string> {
    const bookId = s.ctx.bookId;
    if (!bookId) return 'a book the reader has not chosen yet';
    const cached = this.bookNames.get(bookId);
    if (cached) return cached;
    const { rows } = await this.pool.query<{ title: string; author: string | null }>(
      'SELECT title, author FROM books WHERE id = $1',
      [bookId],
    );
    if (!rows[0]) return 'a book that is no longer available';
    const name = `"${rows[0].title}"${rows[0].author ? ` by ${rows[0].author}` : ''}`;
    if (this.bookNames.size >= 10_000) this.bookNames.clear(); // titles never change; just bound the memory
    this.bookNames.set(bookId, name);
    return name;
  }

  private async systemPrompt(s: Loaded): Promise<string> {
    const book = await this.bookName(s);
    const scope =
      s.ctx.readingPosition === null
        ? 'The reader may discuss the whole book.'
        : `The reader has read up to and including chapter ${s.ctx.readingPosition}. Search only finds passages up to there.`;
    return renderPrompt('conversation_system_prompt', { book, reading_scope: scope });
  }

  /** Agent events name the owner, the turn (correlation) and the event they follow from (causation). */
  private event<T extends ConversationEventType>(
    history: StoredEvent<ConversationEvent>[],
    turnId: string,
    type: T,
    data: Extract<ConversationEvent, { type: T }>['data'],
  ): NewEvent<ConversationEvent> {
    const owner = history.find((e) => e.type === 'ConversationStarted')?.data;
    const causationId = history[history.length - 1]?.id;
    const event = { type, data } as Extract<ConversationEvent, { type: T }>;
    return { ...event, id: randomUUID(), metadata: { userId: owner?.ownerId, correlationId: turnId, causationId } };
  }

  private async append(
    conversationId: string,
    expectedVersion: number,
    events: NewEvent<ConversationEvent>[],
  ): Promise<void> {
    if (events.length === 0) return;
    await this.store.append(conversationStreamId(conversationId), events, { expectedVersion });
  }
}
