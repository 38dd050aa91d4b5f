import { Inject, Injectable } from '@nestjs/common';
import { randomUUID } from 'node:crypto';
import {
  addUsage,
  buildHistory,
  ChatOptions,
  ChatResult,
  citationStartFor,
  citedPassages,
  costUsd,
  HISTORY_HIGH_SHARE,
  HistoryCutStep,
  historyCutAhead,
  isAbort,
  latestHistoryStart,
  LlmCallSubmitted,
  LlmError,
  LLM_CLIENT,
  LlmClient,
  LlmMessage,
  LlmToolSpec,
  modelCallStopped,
  renderPrompt,
  StoppedAttempt,
  stoppedAttemptsOf,
  ToolRegistry,
  turnEvent,
  TurnRecord,
  turnsToSummarise,
  usesAlwaysRetrieve,
  withStoppedAttempts,
  zeroUsage,
} from '@parley/agent';
import { BooksRepository } from '@parley/books';
import { AppConfig, CONFIG } from '@parley/config';
import { ConversationEvent } from '@parley/conversation';
import { NewEvent } from '@parley/event-store';
import { LiveDeltas } from '@parley/platform';
import { DeltaBatcher } from './delta-batcher';
import { LoadedTurn } from './turn-state';

const HYDE_PREFIX = 'hyde_';
/** A summary is short (the prompt asks for 300 words): it is sent with every turn until the next cut. */
const SUMMARY_MAX_TOKENS = 800;
const isHydeCall = (toolUseId: string) => toolUseId.startsWith(HYDE_PREFIX);

/** The text blocks the model wrote, in order. */
const textsOf = (r: ChatResult): string[] => r.content.flatMap((b) => (b.type === 'text' ? [b.text] : []));

/** Turns as a plain transcript (question, and the answer where there is one), for a helper call's prompt. */
const transcriptOf = (turns: TurnRecord[]): string =>
  turns
    .flatMap((t) => [
      `Reader: ${t.content}`,
      ...(t.ending?.type === 'AssistantReplied' ? [`You: ${t.ending.content}`] : []),
    ])
    .join('\n');

/** What a turn runs by (TurnSteps.settings). */
export interface TurnSettings {
  /** undefined: the client's configured model */
  model: string | undefined;
  maxIterations: number;
  retrievalMode: 'auto' | 'tools' | 'always-retrieve';
  budgetTokens: number;
  instructions: string | undefined;
}

/** One model call of a turn, as the steps below make it. */
interface LlmCall {
  messages: LlmMessage[];
  /** the last message of the stable prefix (earlier turns), for a cache breakpoint */
  prefixEnd: number;
  tools: LlmToolSpec[];
  iteration: number;
  /** false on the last allowed call: it must answer with what it has */
  allowTools: boolean;
  signal: AbortSignal;
}

/**
 * What each step of a turn does, given the turn as the log says it stands: run the recorded tool
 * calls, call the model (tool use, or the always-retrieve plan), and say it as events. Nothing
 * here appends: the runner decides when and where they go.
 */
@Injectable()
export class TurnSteps {
  private readonly bookNames = new Map<string, string>();

  constructor(
    @Inject(LLM_CLIENT) private readonly llm: LlmClient,
    private readonly tools: ToolRegistry,
    private readonly deltas: LiveDeltas,
    private readonly books: BooksRepository,
    @Inject(CONFIG) private readonly config: AppConfig,
  ) {}

  /**
   * Every pending call of the iteration, in parallel; results recorded together, in call order.
   * The always-retrieve plan's HyDE search runs after the query's, leaving out the passages the
   * query already found (the answer reads both: no passage twice).
   */
  async runTools(
    s: LoadedTurn,
    calls: Array<{ toolUseId: string; name: string; input: unknown }>,
  ): Promise<NewEvent<ConversationEvent>[]> {
    const turn = s.turn!;
    const run = async (c: (typeof calls)[number], excludeChunkIds?: string[]) => {
      const citationStart = citationStartFor(turn, c.toolUseId);
      const out = await this.tools.run(c.name, c.input, { ...s.ctx, citationStart, excludeChunkIds }, c.toolUseId);
      return { c, out, citationStart };
    };
    const first = calls.filter((c) => !isHydeCall(c.toolUseId));
    const outputs = await Promise.all(first.map((c) => run(c)));
    const seen = () => outputs.flatMap(({ out }) => (out.chunks ?? []).map((ch) => ch.chunkId));
    for (const c of calls.filter((c) => isHydeCall(c.toolUseId))) outputs.push(await run(c, seen()));
    outputs.sort((a, b) => calls.indexOf(a.c) - calls.indexOf(b.c));
    return outputs.map(({ c, out, citationStart }) =>
      turnEvent(s, turn.turnId, 'ToolResultRecorded', {
        turnId: turn.turnId,
        toolUseId: c.toolUseId,
        content: out.content,
        isError: out.isError ?? false,
        ...(out.chunks ? { chunks: out.chunks, citationStart } : {}),
      }),
    );
  }

  /** The agent's call: the history rebuilt from the log, the tools offered unless this is the last call. */
  async callLlm(
    s: LoadedTurn,
    iteration: number,
    allowTools: boolean,
    signal: AbortSignal,
  ): Promise<NewEvent<ConversationEvent>[]> {
    const { messages, prefixEnd } = buildHistory(s.turns, s.turn!.turnId, this.settings(s).budgetTokens);
    return this.reply(s, { messages, prefixEnd, tools: this.tools.specsFor(s.ctx), iteration, allowTools, signal });
  }

  /** One LLM call: tool calls become ToolInvoked events, a text answer ends the turn. */
  private async reply(s: LoadedTurn, call: LlmCall): Promise<NewEvent<ConversationEvent>[]> {
    const { messages, prefixEnd, tools, iteration, allowTools, signal } = call;
    const conversationId = s.ctx.conversationId;
    const turn = s.turn!;
    const deltas = new DeltaBatcher(this.deltas, conversationId, turn.turnId, iteration);
    const viaBatch = this.viaBatch(turn, iteration);
    let result: ChatResult;
    try {
      result = await this.llm.chatWithTools(messages, tools, {
        system: await this.systemPrompt(s),
        model: this.settings(s).model,
        prefixEnd,
        toolChoice: allowTools ? 'auto' : 'none',
        signal,
        onTextDelta: (text, attempt = 1) => deltas.add(text, attempt),
        viaBatch,
      });
    } catch (e) {
      if (!(e instanceof LlmCallSubmitted) || !viaBatch) throw e;
      // paid for from here on: recorded (and kept) before the turn waits for the batch to end
      return [
        turnEvent(s, turn.turnId, 'ModelBatchSubmitted', {
          turnId: turn.turnId,
          step: viaBatch.callId,
          provider: this.llm.provider,
          providerBatchId: e.providerBatchId,
        }),
      ];
    } finally {
      deltas.flush();
    }
    const text = textsOf(result).join('');
    const stopped = this.stopped(s, iteration, result.stoppedAttempts);
    const toolUses = allowTools ? result.content.filter((b) => b.type === 'tool_use') : [];
    if (toolUses.length > 0) {
      return [
        ...stopped,
        ...toolUses.map((b, i) =>
          turnEvent(s, turn.turnId, 'ToolInvoked', {
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
                  ...(result.batched ? { batched: true } : {}),
                }
              : {}),
          }),
        ),
      ];
    }
    const usage = turn.iterations.reduce((sum, it) => (it.usage ? addUsage(sum, it.usage) : sum), zeroUsage());
    const total = addUsage(usage, result.usage);
    const citations = citedPassages(text, turn);
    const content = text.trim() ? text : '(no answer)';
    return [
      ...stopped,
      turnEvent(s, turn.turnId, 'AssistantReplied', {
        turnId: turn.turnId,
        messageId: randomUUID(),
        content,
        model: result.model,
        stopReason: result.stopReason,
        usage: total,
        costUsd: costUsd(result.model, total, { batched: result.batched }),
        citations,
        isFromBook: citations.length > 0,
        iterations: iteration,
        latencyMs: Date.now() - turn.postedAt.getTime(),
      }),
    ];
  }

  /**
   * A batch prompt sent `via: message-batches` has its answering calls (not the small helper
   * calls: a reformulated query, a summary) go through the provider's Message Batches API.
   */
  private viaBatch(turn: TurnRecord, iteration: number): ChatOptions['viaBatch'] {
    if (turn.batch?.via !== 'message-batches' || !this.llm.supportsBatches) return undefined;
    const callId = `${turn.turnId}/reply/${iteration}`;
    return { callId, providerBatchId: turn.modelBatches?.[callId] };
  }

  /** Attempts of a call broken off midway before the one that answered: billed all the same. */
  private stopped(s: LoadedTurn, iteration: number, attempts: StoppedAttempt[] = []): NewEvent<ConversationEvent>[] {
    return modelCallStopped(s, s.turn!.turnId, iteration, attempts);
  }

  /** What the turn runs by: the conversation's policy when it was posted, the server's configuration for the rest. */
  settings(s: LoadedTurn): TurnSettings {
    const policy = s.turn?.policy ?? {};
    const serverMax = this.config.agent.maxIterations;
    return {
      model: policy.model,
      maxIterations: Math.min(policy.maxIterations ?? serverMax, serverMax),
      retrievalMode: policy.retrievalMode ?? this.config.llm.retrievalMode,
      budgetTokens: policy.contextBudgetTokens ?? this.config.agent.contextTokens,
      instructions: policy.instructions,
    };
  }

  /**
   * The cut the next turn would need, due now that this turn has replied (historyCutAhead). Not
   * for a batch's turns: a batch's figures are final when it completes.
   */
  cutAhead(s: LoadedTurn): HistoryCutStep | undefined {
    if (!s.turn || s.turn.batch) return undefined;
    const index = s.turns.indexOf(s.turn);
    const cut = historyCutAhead(s.turns, index, this.settings(s).budgetTokens, !this.alwaysRetrieve(s));
    return cut && { kind: 'cut-history', ...cut };
  }

  /** Providers without tool use (or the always-retrieve mode) search first, then answer. */
  alwaysRetrieve(s: LoadedTurn): boolean {
    if (!s.ctx.bookId || !this.tools.specsFor(s.ctx).some((t) => t.name === 'search_book')) return false;
    return usesAlwaysRetrieve(this.settings(s).retrievalMode, this.llm.supportsTools);
  }

  /**
   * Turns the question into one self-contained query, recorded as the turn's search_book call;
   * with RETRIEVAL_HYDE, a second call at the same time writes a passage that would answer it,
   * recorded as a second search_book call (toolUseId `hyde_…`) with that passage as the query.
   */
  async reformulate(s: LoadedTurn, signal: AbortSignal): Promise<NewEvent<ConversationEvent>[]> {
    const turn = s.turn!;
    const earlier = s.turns.slice(0, s.turns.indexOf(turn)).slice(-3);
    const conversation = transcriptOf(earlier);
    const vars = { book: await this.bookName(s), conversation: conversation || '(none)', question: turn.content };
    const ask = (prompt: string, system: string, maxTokens: number) =>
      this.llm.chatWithTools([{ role: 'user', content: [{ type: 'text', text: prompt }] }], [], {
        system,
        model: this.settings(s).model,
        maxTokens,
        signal,
      });
    const [queried, written] = await Promise.allSettled([
      ask(renderPrompt('reformulation_prompt', vars), 'You write search queries.', 200),
      this.config.llm.hyde
        ? ask(renderPrompt('hyde_passage', vars), 'You write short passages in the style of a book.', 300)
        : Promise.resolve(null),
    ]);
    if (queried.status === 'rejected' || written.status === 'rejected') {
      // both calls stop together on a cancel: the error thrown carries what either was billed
      const errors = [queried, written].flatMap((r) => (r.status === 'rejected' ? [r.reason as Error] : []));
      throw withStoppedAttempts(errors[0], errors.flatMap(stoppedAttemptsOf));
    }
    const [result, hyde] = [queried.value, written.value];
    const stopped = this.stopped(s, 1, [...(result.stoppedAttempts ?? []), ...(hyde?.stoppedAttempts ?? [])]);
    const query = textsOf(result).join(' ').split('\n')[0].trim().slice(0, 500) || turn.content.slice(0, 500);
    const passage = hyde ? textsOf(hyde).join(' ').replace(/\s+/g, ' ').trim().slice(0, 500) : '';
    return [
      ...stopped,
      turnEvent(s, turn.turnId, 'ToolInvoked', {
        turnId: turn.turnId,
        toolUseId: `retrieve_${randomUUID()}`,
        name: 'search_book',
        input: { query },
        iteration: 1,
        usage: hyde ? addUsage(result.usage, hyde.usage) : result.usage,
        model: result.model,
      }),
      ...(passage
        ? [
            turnEvent(s, turn.turnId, 'ToolInvoked', {
              turnId: turn.turnId,
              toolUseId: `${HYDE_PREFIX}${randomUUID()}`,
              name: 'search_book',
              input: { query: passage },
              iteration: 1,
            }),
          ]
        : []),
    ];
  }

  /**
   * Cuts the turn's history before its first call: the model summarises the turns left out (with
   * the summary before them) into HistorySummarized; when that call fails, HistoryTrimmed drops
   * them unsummarised. Either is recorded, so every later step and turn sends the same history.
   */
  async cutHistory(s: LoadedTurn, cut: HistoryCutStep, signal: AbortSignal): Promise<NewEvent<ConversationEvent>[]> {
    const turn = s.turn!;
    const lastCut = s.turns[cut.to].postedVersion - 1;
    const previous = latestHistoryStart(s.turns, s.turns.indexOf(turn))?.summary;
    const budget = this.settings(s).budgetTokens;
    const summarised = turnsToSummarise(s.turns, cut.from, cut.to, budget * HISTORY_HIGH_SHARE);
    const conversation = transcriptOf(summarised);
    const firstCovered = previous?.coversVersions[0] ?? summarised[0]?.postedVersion ?? lastCut;
    try {
      const result = await this.llm.chatWithTools(
        [
          {
            role: 'user',
            content: [
              {
                type: 'text',
                text: renderPrompt('history_summary', {
                  book: await this.bookName(s),
                  previous_summary: previous?.text ?? '(none)',
                  conversation: conversation || '(none)',
                }),
              },
            ],
          },
        ],
        [],
        {
          system: 'You summarise conversations faithfully and briefly.',
          model: this.settings(s).model,
          maxTokens: SUMMARY_MAX_TOKENS,
          signal,
        },
      );
      const summary = textsOf(result).join('').trim();
      if (!summary)
        throw withStoppedAttempts(
          new LlmError('the model wrote an empty summary', 'empty_summary', false),
          result.stoppedAttempts ?? [],
        );
      return [
        ...this.stopped(s, 1, result.stoppedAttempts),
        turnEvent(s, turn.turnId, 'HistorySummarized', {
          turnId: turn.turnId,
          coversVersions: [firstCovered, lastCut],
          summary,
          usage: result.usage,
          model: result.model,
          costUsd: costUsd(result.model, result.usage),
        }),
      ];
    } catch (e) {
      if (isAbort(e) || signal.aborted || !(e instanceof LlmError)) throw e;
      return [
        ...this.stopped(s, 1, stoppedAttemptsOf(e)),
        turnEvent(s, turn.turnId, 'HistoryTrimmed', {
          turnId: turn.turnId,
          droppedVersions: [s.turns[cut.from]?.postedVersion ?? lastCut, lastCut],
          reason: `${e.code}: ${e.message}`.slice(0, 500),
        }),
      ];
    }
  }

  /** The answer with the retrieved passages in the prompt, no tools offered. */
  async answerFromPassages(s: LoadedTurn, signal: AbortSignal): Promise<NewEvent<ConversationEvent>[]> {
    const turn = s.turn!;
    // a HyDE search that found nothing new adds nothing to read
    const passages = turn.iterations
      .flatMap((it) => [...it.results].filter(([id, r]) => !isHydeCall(id) || r.chunks.length > 0))
      .map(([, r]) => r.content)
      .join('\n\n');
    const currentMessages = [
      {
        role: 'user' as const,
        content: [
          ...(turn.sourcesNote ? [{ type: 'text' as const, text: turn.sourcesNote }] : []),
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
    const { messages, prefixEnd } = buildHistory(s.turns, turn.turnId, this.settings(s).budgetTokens, {
      withTools: false,
      currentMessages,
    });
    return this.reply(s, {
      messages,
      prefixEnd,
      tools: [],
      iteration: turn.iterations.length + 1,
      allowTools: false,
      signal,
    });
  }

  /** The book's title and author, read once per book: every LLM call of every turn needs it. */
  private async bookName(s: LoadedTurn): Promise<string> {
    // the book the conversation started with: a later change of books is told in the messages, so the cached system prompt holds
    const bookId = s.startedBookId;
    if (!bookId) return 'a book the reader has not chosen yet';
    const cached = this.bookNames.get(bookId);
    if (cached) return cached;
    const book = await this.books.find(null, bookId);
    if (!book) return 'a book that is no longer available';
    const name = `"${book.title}"${book.author ? ` by ${book.author}` : ''}`;
    if (this.bookNames.size >= 10_000) this.bookNames.clear(); // titles never change; just bound the memory
    this.bookNames.set(bookId, name);
    return name;
  }

  private async systemPrompt(s: LoadedTurn): Promise<string> {
    const book = await this.bookName(s);
    const scope =
      s.ctx.readingPosition === null
        ? 'The reader may discuss the whole book.'
        : `The reader has read up to and including chapter ${s.ctx.readingPosition}. Search only finds passages up to there.`;
    const prompt = renderPrompt('conversation_system_prompt', { book, reading_scope: scope });
    const { instructions } = this.settings(s);
    return instructions
      ? `${prompt}\n\nThe reader's instructions for this conversation:\n<instructions>\n${instructions}\n</instructions>`
      : prompt;
  }
}
