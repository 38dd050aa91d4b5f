import { Logger } from '@nestjs/common';
import {
  AgentCommand,
  answerOf,
  ChatOutcome,
  HistoryCutStep,
  historyCutOf,
  isAbort,
  LlmClient,
  LlmError,
  newStep,
  renderPrompt,
  stoppedAttemptsOf,
} from '@parley/agent';
import { BookNames } from './book-names';
import { TurnView } from './conversation-folds';
import { transcriptOf } from './transcript';

/** A summary is short (the prompt asks for 300 words): it is sent with every turn until the next cut. */
const SUMMARY_MAX_TOKENS = 800;

/**
 * Cuts a turn's history before its first call: the model summarises the turns left out (with
 * the summary before them) into HistorySummarized; when that call fails, HistoryTrimmed drops
 * them unsummarised. Either is recorded, so every later step and turn sends the same history.
 */
export class HistorySummary {
  private readonly logger = new Logger(HistorySummary.name);

  constructor(
    private readonly llm: LlmClient,
    private readonly bookNames: BookNames,
    /** LLM_SUMMARY_MODEL: a cheaper model for summaries; unset: the turn's own */
    private readonly summaryModel?: string,
  ) {}

  async cut(view: TurnView, step: HistoryCutStep, signal: AbortSignal): Promise<AgentCommand> {
    const { turnId } = view.turn;
    const cut = historyCutOf(view.folded.turns, turnId, step, view.settings.budgetTokens);
    const prompt = renderPrompt('history_summary', {
      book: await this.bookNames.of(view.folded),
      previous_summary: cut.previous?.text ?? '(none)',
      conversation: transcriptOf(cut.summarised) || '(none)',
    });
    const { coversVersions, droppedVersions } = cut;
    const recorded = { turnId, ...newStep(), cut: { coversVersions, droppedVersions } };
    let outcome: ChatOutcome;
    try {
      outcome = await this.llm.chatWithTools([{ role: 'user', content: [{ type: 'text', text: prompt }] }], [], {
        system: 'You summarise conversations faithfully and briefly.',
        model: this.summaryModel ?? view.settings.model,
        maxTokens: SUMMARY_MAX_TOKENS,
        signal,
      });
    } catch (e) {
      // a summary the budget cannot pay for fails the turn as its answer would: no history is lost for it
      if (isAbort(e) || signal.aborted || !(e instanceof LlmError) || e.code === 'budget_exceeded') throw e;
      // the event says why in Parley's words; what the provider said is for the log
      if (e.providerDetail)
        this.logger.warn(`turn ${turnId}: the summary call failed (${e.code}): ${e.providerDetail}`);
      const failure = { code: e.code, message: e.message, stoppedAttempts: stoppedAttemptsOf(e) };
      return { type: 'RecordTrimmedHistory', ...recorded, failure };
    }
    return { type: 'RecordSummary', ...recorded, result: answerOf(outcome) };
  }
}
