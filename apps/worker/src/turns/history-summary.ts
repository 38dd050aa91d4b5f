import {
  answerOf,
  ChatOutcome,
  HistoryCutStep,
  historyCutOf,
  historySummarized,
  historyTrimmed,
  isAbort,
  LlmClient,
  LlmError,
  renderPrompt,
} from '@parley/agent';
import { ConversationEvent } from '@parley/conversation';
import { NewEvent } from '@parley/event-store';
import { BookNames } from './book-names';
import { LoadedTurn, stepOrigin } from './conversation-folds';
import { transcriptOf } from './transcript';

/** A summary is short (the prompt asks for 300 words): it is sent with every turn until the next cut. */
const SUMMARY_MAX_TOKENS = 800;

/**
 * Cuts a turn's history before its first call: the model summarises the turns left out (with
 * the summary before them) into HistorySummarized; when that call fails, HistoryTrimmed drops
 * them unsummarised. Either is recorded, so every later step and turn sends the same history.
 */
export class HistorySummary {
  constructor(
    private readonly llm: LlmClient,
    private readonly bookNames: BookNames,
    /** LLM_SUMMARY_MODEL: a cheaper model for summaries; unset: the turn's own */
    private readonly summaryModel?: string,
  ) {}

  async cut(loaded: LoadedTurn, step: HistoryCutStep, signal: AbortSignal): Promise<NewEvent<ConversationEvent>[]> {
    const { turnId } = loaded.turn!;
    const cut = historyCutOf(loaded.turns, turnId, step, loaded.settings.budgetTokens);
    const prompt = renderPrompt('history_summary', {
      book: await this.bookNames.of(loaded),
      previous_summary: cut.previous?.text ?? '(none)',
      conversation: transcriptOf(cut.summarised) || '(none)',
    });
    let outcome: ChatOutcome;
    try {
      outcome = await this.llm.chatWithTools([{ role: 'user', content: [{ type: 'text', text: prompt }] }], [], {
        system: 'You summarise conversations faithfully and briefly.',
        model: this.summaryModel ?? loaded.settings.model,
        maxTokens: SUMMARY_MAX_TOKENS,
        signal,
      });
    } catch (e) {
      if (isAbort(e) || signal.aborted || !(e instanceof LlmError)) throw e;
      return historyTrimmed(stepOrigin(loaded), turnId, cut, e);
    }
    return historySummarized(stepOrigin(loaded), turnId, cut, answerOf(outcome));
  }
}
