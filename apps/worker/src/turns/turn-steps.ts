import { Inject, Injectable } from '@nestjs/common';
import {
  buildHistory,
  HistoryCutStep,
  LiveDeltas,
  LLM_CLIENT,
  LlmClient,
  ToolCallRecord,
  ToolRegistry,
  TurnPlanContext,
} from '@parley/agent';
import { BooksRepository, WholeBooks } from '@parley/books';
import { AppConfig, CONFIG } from '@parley/config';
import { ConversationEvent } from '@parley/conversation';
import { NewEvent } from '@parley/event-store';
import { AlwaysRetrieveSteps } from './always-retrieve-steps';
import { BookNames } from './book-names';
import { LoadedTurn } from './conversation-folds';
import { HistorySummary } from './history-summary';
import { ModelReply, StepResult } from './model-reply';
import { runToolCalls } from './tool-calls';
import { WholeBookSteps } from './whole-book-steps';

const eventsOf = (events: NewEvent<ConversationEvent>[]): StepResult => ({ kind: 'events', events });

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
  private readonly wholeBook: WholeBookSteps;

  constructor(
    @Inject(LLM_CLIENT) private readonly llm: LlmClient,
    private readonly tools: ToolRegistry,
    deltas: LiveDeltas,
    books: BooksRepository,
    @Inject(CONFIG) config: AppConfig,
    wholeBooks: WholeBooks,
  ) {
    const bookNames = new BookNames(books);
    this.model = new ModelReply(llm, deltas, bookNames);
    this.history = new HistorySummary(llm, bookNames);
    this.retrieval = new AlwaysRetrieveSteps(llm, this.model, bookNames, config);
    this.wholeBook = new WholeBookSteps(llm, this.model, wholeBooks, config);
  }

  /** What the plan goes by besides the turns: the turn's settings, the search offered, the provider's tool use. */
  async planContext(loaded: LoadedTurn): Promise<TurnPlanContext> {
    return {
      settings: loaded.settings,
      searchOffered: !!loaded.ctx.bookId && this.tools.specsFor(loaded.ctx).some((t) => t.name === 'search_book'),
      providerSupportsTools: this.llm.supportsTools,
      deleted: loaded.deleted,
      wholeBook: !loaded.deleted && (await this.wholeBook.reads(loaded)),
    };
  }

  async runTools(loaded: LoadedTurn, calls: ToolCallRecord[]): Promise<StepResult> {
    return eventsOf(await runToolCalls(this.tools, loaded, calls));
  }

  /** The agent's call: the history rebuilt from the log, the tools offered unless this is the last call. */
  async callLlm(loaded: LoadedTurn, iteration: number, allowTools: boolean, signal: AbortSignal): Promise<StepResult> {
    const { messages, prefixEnd } = buildHistory(loaded.turns, loaded.turn!.turnId, loaded.settings.budgetTokens);
    const tools = this.tools.specsFor(loaded.ctx);
    return this.model.reply(loaded, { messages, prefixEnd, tools, iteration, allowTools, signal });
  }

  async cutHistory(loaded: LoadedTurn, cut: HistoryCutStep, signal: AbortSignal): Promise<StepResult> {
    return eventsOf(await this.history.cut(loaded, cut, signal));
  }

  async reformulate(loaded: LoadedTurn, signal: AbortSignal): Promise<StepResult> {
    return eventsOf(await this.retrieval.reformulate(loaded, signal));
  }

  answerFromPassages(loaded: LoadedTurn, signal: AbortSignal): Promise<StepResult> {
    return this.retrieval.answerFromPassages(loaded, signal);
  }

  answerFromBook(loaded: LoadedTurn, iteration: number, signal: AbortSignal): Promise<StepResult> {
    return this.wholeBook.answer(loaded, iteration, signal);
  }
}
