import {
  answerOf,
  costUsd,
  HISTORY_HIGH_SHARE,
  HistoryCutStep,
  isAbort,
  latestHistoryStart,
  LlmClient,
  LlmError,
  modelCallStopped,
  renderPrompt,
  stoppedAttemptsOf,
  turnEvent,
  turnsToSummarise,
  withStoppedAttempts,
} from '@parley/agent';
import { ConversationEvent } from '@parley/conversation';
import { NewEvent } from '@parley/event-store';
import { BookNames } from './book-names';
import { textsOf, transcriptOf } from './model-text';
import { LoadedTurn } from './conversation-folds';

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
  ) {}

  async cut(loaded: LoadedTurn, cut: HistoryCutStep, signal: AbortSignal): Promise<NewEvent<ConversationEvent>[]> {
    const turn = loaded.turn!;
    const lastCut = loaded.turns[cut.to].postedVersion - 1;
    const previous = latestHistoryStart(loaded.turns, loaded.turns.indexOf(turn))?.summary;
    const budget = loaded.settings.budgetTokens;
    const summarised = turnsToSummarise(loaded.turns, cut.from, cut.to, budget * HISTORY_HIGH_SHARE);
    const conversation = transcriptOf(summarised);
    const firstCovered = previous?.coversVersions[0] ?? summarised[0]?.postedVersion ?? lastCut;
    try {
      const outcome = await this.llm.chatWithTools(
        [
          {
            role: 'user',
            content: [
              {
                type: 'text',
                text: renderPrompt('history_summary', {
                  book: await this.bookNames.of(loaded),
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
          model: loaded.settings.model,
          maxTokens: SUMMARY_MAX_TOKENS,
          signal,
        },
      );
      const result = answerOf(outcome);
      const summary = textsOf(result).join('').trim();
      if (!summary)
        throw withStoppedAttempts(
          new LlmError('the model wrote an empty summary', 'empty_summary', false),
          result.stoppedAttempts ?? [],
        );
      return [
        ...modelCallStopped(loaded, turn.turnId, 1, result.stoppedAttempts ?? []),
        turnEvent(loaded, turn.turnId, 'HistorySummarized', {
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
        ...modelCallStopped(loaded, turn.turnId, 1, stoppedAttemptsOf(e)),
        turnEvent(loaded, turn.turnId, 'HistoryTrimmed', {
          turnId: turn.turnId,
          droppedVersions: [loaded.turns[cut.from]?.postedVersion ?? lastCut, lastCut],
          reason: `${e.code}: ${e.message}`.slice(0, 500),
        }),
      ];
    }
  }
}
