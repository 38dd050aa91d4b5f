import { Inject, Injectable } from '@nestjs/common';
import {
  buildHistory,
  LiveDeltas,
  LLM_CLIENT,
  LlmClient,
  newStep,
  ToolRegistry,
  TurnPlanContext,
  TurnStep,
  TurnWait,
} from '@parley/agent';
import { BooksRepository, WholeBooks } from '@parley/books';
import { AppConfig, CONFIG } from '@parley/config';
import { AlwaysRetrieveSteps } from './always-retrieve-steps';
import { BookNames } from './book-names';
import { BudgetedLlm } from './budgeted-llm';
import { TurnView } from './conversation-folds';
import { HistorySummary } from './history-summary';
import { ModelReply, recordWith, StepResult } from './model-reply';
import { runToolCalls } from './tool-calls';
import { retrievesAfterToolRefusal } from './tool-refusal';
import { TurnBudget } from './turn-budget';
import { WholeBookSteps } from './whole-book-steps';

/**
 * What each step of a turn does, given the turn as the log says it stands: run the recorded tool
 * calls, call the model (tool use, or the always-retrieve plan), and say it as the command that
 * records it. Nothing here appends: the runner hands the command to the command handler. Each
 * step's work is in its own module.
 */
@Injectable()
export class TurnSteps {
  private readonly model: ModelReply;
  private readonly history: HistorySummary;
  private readonly retrieval: AlwaysRetrieveSteps;
  private readonly wholeBook: WholeBookSteps;
  private readonly approvalTimeoutMs: number | undefined;

  constructor(
    @Inject(LLM_CLIENT) private readonly llm: LlmClient,
    private readonly tools: ToolRegistry,
    deltas: LiveDeltas,
    books: BooksRepository,
    @Inject(CONFIG) config: AppConfig,
    wholeBooks: WholeBooks,
    private readonly budget: TurnBudget,
  ) {
    this.approvalTimeoutMs = config.agent.approvalTimeoutMs;
    const bookNames = new BookNames(books);
    // every call a step makes is reserved against its payer's budget first (see perform)
    const paid = new BudgetedLlm(llm, budget, config.llm);
    this.model = new ModelReply(paid, deltas, bookNames);
    this.history = new HistorySummary(paid, bookNames, config.llm.summaryModel);
    this.retrieval = new AlwaysRetrieveSteps(paid, this.model, bookNames, config);
    this.wholeBook = new WholeBookSteps(llm, this.model, wholeBooks, config);
  }

  /** What the plan goes by besides the turns: the turn's settings, the search offered, the provider's tool use. */
  async planContext(view: TurnView): Promise<TurnPlanContext> {
    const deleted = view.folded.state.status !== 'active';
    return {
      settings: view.settings,
      searchOffered: !!view.ctx.bookId && this.tools.tool('search_book')?.availableFor(view.ctx) === true,
      providerSupportsTools: this.llm.capabilitiesOf(view.settings.model).tools,
      deleted,
      wholeBook: !deleted && (await this.wholeBook.reads(view)),
      needsApproval: (tool) => this.tools.needsApproval(tool),
      now: Date.now(),
    };
  }

  /**
   * Does one step of the plan (its I/O) and says what came of it; nothing here appends. Its model
   * calls reserve their worst case against the reader's budget, if they have one.
   */
  async perform(view: TurnView, step: WorkStep, signal: AbortSignal): Promise<StepResult> {
    const payer = this.budget.payerOf(view.folded.state.ownerId, view.turn, view.folded.version);
    return BudgetedLlm.paying(payer, () => this.performStep(view, step, signal));
  }

  private async performStep(view: TurnView, step: WorkStep, signal: AbortSignal): Promise<StepResult> {
    switch (step.kind) {
      case 'run-tools':
        return recordWith(await runToolCalls(this.tools, view, step.calls));
      case 'call-llm':
        return this.whyNotWholeBook(view, await this.callLlm(view, step.iteration, step.allowTools, signal));
      case 'cut-history':
        return recordWith(await this.history.cut(view, step, signal));
      case 'reformulate':
        return recordWith(await this.retrieval.reformulate(view, signal));
      case 'answer':
        return this.whyNotWholeBook(view, await this.retrieval.answerFromPassages(view, signal));
      case 'answer-from-book':
        return this.wholeBook.answer(view, step.iteration, signal);
      case 'request-approvals': {
        const timeout = this.approvalTimeoutMs;
        const expiresAt = timeout === undefined ? undefined : new Date(Date.now() + timeout).toISOString();
        const { turnId } = view.turn;
        return recordWith({ type: 'RequestToolApprovals', turnId, ...newStep(), calls: step.calls, expiresAt });
      }
      case 'expire-approvals':
        return recordWith({
          type: 'ExpireToolApprovals',
          turnId: view.turn.turnId,
          ...newStep(),
          toolCallIds: step.calls.map((c) => c.toolUseId),
        });
    }
  }

  /** A searching model reply of a turn whose policy asked for `whole-book`: why it searched, for its answer to say. */
  private async whyNotWholeBook(view: TurnView, done: StepResult): Promise<StepResult> {
    if (done.kind !== 'command' || done.command.type !== 'RecordModelReply') return done;
    const searchedInstead = await this.wholeBook.searchedInstead(view);
    return searchedInstead ? recordWith({ ...done.command, searchedInstead }) : done;
  }

  /** The agent's call: the history rebuilt from the log, the tools offered unless this is the last call. */
  private async callLlm(
    view: TurnView,
    iteration: number,
    allowTools: boolean,
    signal: AbortSignal,
  ): Promise<StepResult> {
    const { messages, prefixEnd } = buildHistory(view.folded.turns, view.turn.turnId, view.settings.budgetTokens);
    const tools = this.tools.specsFor(view.ctx);
    try {
      return await this.model.reply(view, { messages, prefixEnd, tools, iteration, allowTools, signal });
    } catch (e) {
      // the model refused tools (now known to all workers): this turn searches first instead
      if (retrievesAfterToolRefusal(e, view, iteration))
        return recordWith(await this.retrieval.reformulate(view, signal));
      throw e;
    }
  }
}

/** A step that does work (the plan's other answers end the turn or make it wait). */
export type WorkStep = Exclude<TurnStep, { kind: 'ended' } | TurnWait | { kind: 'wait-approval' }>;
