import { Inject, Injectable } from '@nestjs/common';
import {
  buildHistory,
  HistoryCutStep,
  historyCutAhead,
  LLM_CLIENT,
  LlmClient,
  ToolRegistry,
  usesAlwaysRetrieve,
} from '@parley/agent';
import { BooksRepository } from '@parley/books';
import { AppConfig, CONFIG } from '@parley/config';
import { ConversationEvent } from '@parley/conversation';
import { NewEvent } from '@parley/event-store';
import { LiveDeltas } from '@parley/platform';
import { AlwaysRetrieveSteps } from './always-retrieve-steps';
import { BookNames } from './book-names';
import { HistorySummary } from './history-summary';
import { ModelReply } from './model-reply';
import { runToolCalls, ToolCall } from './tool-calls';
import { turnSettings, TurnSettings } from './turn-settings';
import { LoadedTurn } from './conversation-folds';

/**
 * What each step of a turn does, given the turn as the log says it stands: run the recorded tool
 * calls, call the model (tool use, or the always-retrieve plan), and say it as events. Nothing
 * here appends: the runner decides when and where they go. Each step's work is in its own module.
 */
@Injectable()
export class TurnSteps {
  private readonly model: ModelReply;
  private readonly history: HistorySummary;
  private readonly retrieval: AlwaysRetrieveSteps;

  constructor(
    @Inject(LLM_CLIENT) private readonly llm: LlmClient,
    private readonly tools: ToolRegistry,
    deltas: LiveDeltas,
    books: BooksRepository,
    @Inject(CONFIG) private readonly config: AppConfig,
  ) {
    const bookNames = new BookNames(books);
    const settingsOf = (s: LoadedTurn) => this.settings(s);
    this.model = new ModelReply(llm, deltas, bookNames, settingsOf);
    this.history = new HistorySummary(llm, bookNames, settingsOf);
    this.retrieval = new AlwaysRetrieveSteps(llm, this.model, bookNames, settingsOf, config);
  }

  runTools(s: LoadedTurn, calls: ToolCall[]): Promise<NewEvent<ConversationEvent>[]> {
    return runToolCalls(this.tools, s, calls);
  }

  /** The agent's call: the history rebuilt from the log, the tools offered unless this is the last call. */
  async callLlm(
    s: LoadedTurn,
    iteration: number,
    allowTools: boolean,
    signal: AbortSignal,
  ): Promise<NewEvent<ConversationEvent>[]> {
    const { messages, prefixEnd } = buildHistory(s.turns, s.turn!.turnId, this.settings(s).budgetTokens);
    const tools = this.tools.specsFor(s.ctx);
    return this.model.reply(s, { messages, prefixEnd, tools, iteration, allowTools, signal });
  }

  /** What the turn runs by: the conversation's policy when it was posted, the server's configuration for the rest. */
  settings(s: LoadedTurn): TurnSettings {
    return turnSettings(s.turn?.policy, this.config);
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

  cutHistory(s: LoadedTurn, cut: HistoryCutStep, signal: AbortSignal): Promise<NewEvent<ConversationEvent>[]> {
    return this.history.cut(s, cut, signal);
  }

  reformulate(s: LoadedTurn, signal: AbortSignal): Promise<NewEvent<ConversationEvent>[]> {
    return this.retrieval.reformulate(s, signal);
  }

  answerFromPassages(s: LoadedTurn, signal: AbortSignal): Promise<NewEvent<ConversationEvent>[]> {
    return this.retrieval.answerFromPassages(s, signal);
  }
}
