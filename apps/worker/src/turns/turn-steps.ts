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
import { BooksRepository } from '@parley/books';
import { AppConfig, CONFIG } from '@parley/config';
import { ConversationEvent } from '@parley/conversation';
import { NewEvent } from '@parley/event-store';
import { AlwaysRetrieveSteps } from './always-retrieve-steps';
import { BookNames } from './book-names';
import { LoadedTurn } from './conversation-folds';
import { HistorySummary } from './history-summary';
import { ModelReply, StepResult } from './model-reply';
import { runToolCalls } from './tool-calls';
import { retrievesAfterToolRefusal } from './tool-refusal';

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

  constructor(
    @Inject(LLM_CLIENT) private readonly llm: LlmClient,
    private readonly tools: ToolRegistry,
    deltas: LiveDeltas,
    books: BooksRepository,
    @Inject(CONFIG) config: AppConfig,
  ) {
    const bookNames = new BookNames(books);
    this.model = new ModelReply(llm, deltas, bookNames);
    this.history = new HistorySummary(llm, bookNames, config.llm.summaryModel);
    this.retrieval = new AlwaysRetrieveSteps(llm, this.model, bookNames, config);
  }

  /** What the plan goes by besides the turns: the turn's settings, the search offered, the provider's tool use. */
  planContext(loaded: LoadedTurn): TurnPlanContext {
    return {
      settings: loaded.settings,
      searchOffered: !!loaded.ctx.bookId && this.tools.specsFor(loaded.ctx).some((t) => t.name === 'search_book'),
      providerSupportsTools: this.llm.supportsToolsFor?.(loaded.settings.model) ?? this.llm.supportsTools,
      deleted: loaded.deleted,
    };
  }

  async runTools(loaded: LoadedTurn, calls: ToolCallRecord[]): Promise<StepResult> {
    return eventsOf(await runToolCalls(this.tools, loaded, calls));
  }

  /** The agent's call: the history rebuilt from the log, the tools offered unless this is the last call. */
  async callLlm(loaded: LoadedTurn, iteration: number, allowTools: boolean, signal: AbortSignal): Promise<StepResult> {
    const { messages, prefixEnd } = buildHistory(loaded.turns, loaded.turn!.turnId, loaded.settings.budgetTokens);
    const tools = this.tools.specsFor(loaded.ctx);
    try {
      return await this.model.reply(loaded, { messages, prefixEnd, tools, iteration, allowTools, signal });
    } catch (e) {
      // the model refused tools (now known to all workers): this turn searches first instead
      if (retrievesAfterToolRefusal(e, loaded, iteration)) return this.reformulate(loaded, signal);
      throw e;
    }
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
}
