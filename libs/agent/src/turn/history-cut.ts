import { HistoryStart, latestHistoryStart, TurnRecord } from './turn-fold';
import { estimateTokens, pastTurnMessages, summaryMessage } from './turn-messages';

/**
 * Where a turn's history starts and when it is cut: the window of earlier turns within the
 * context budget, the cut a turn makes (before its first call, or ahead for the next turn), and
 * what a cut's summary is written from.
 */

/**
 * The history of earlier turns may fill this share of the context budget; past it, the turn
 * that would send more cuts it in one step down to the low share (summarising what it leaves out),
 * so the start of the history, and with it the cached prompt prefix, holds for many turns. The
 * rest of the budget is the current turn's: its tool results and answer.
 */
export const HISTORY_HIGH_SHARE = 0.75;
export const HISTORY_LOW_SHARE = 0.4;

/** Where the history of a turn starts. */
export interface HistoryWindow {
  /** the index of the first earlier turn sent */
  start: number;
  /** sent before the turns: the latest summary recorded at or before this turn */
  summary?: { text: string; coversVersions: [number, number] };
  /**
   * This turn must cut first (it has no cut of its own yet and the history outgrew its share):
   * the turns [from, start) are to be summarised, with the summary before them, or dropped.
   */
  cut?: { from: number };
}

/**
 * The history window of the turn at `index`: the turns since the latest cut, or, when those
 * (with the summary) outgrow the high share of the budget, the newest of them within the low
 * share. A pure function of the recorded turns, so every step, worker and retry of a turn sends
 * the same history, and the turns after it the same prefix until the next cut. `index` may be
 * `turns.length`: the window of a turn not posted yet.
 */
export function historyWindow(
  turns: TurnRecord[],
  index: number,
  budgetTokens: number,
  withTools = true,
): HistoryWindow {
  const latest = latestHistoryStart(turns, index);
  const base = firstAfter(turns, latest?.afterVersion ?? 0, index);
  const summary = latest?.summary;
  const summaryTokens = summary ? estimateTokens([summaryMessage(summary.text)]) : 0;
  let span = summaryTokens;
  for (let i = base; i < index; i++) span += pastTurnMessages(turns[i], withTools).tokens;
  if (turns[index]?.historyStart || span <= budgetTokens * HISTORY_HIGH_SHARE) return { start: base, summary };
  let start = index;
  let kept = 0;
  while (start > base) {
    const cost = pastTurnMessages(turns[start - 1], withTools).tokens;
    if (kept + cost > budgetTokens * HISTORY_LOW_SHARE) break;
    kept += cost;
    start--;
  }
  return { start, summary, cut: { from: base } };
}

/**
 * The cut the turn after the one at `index` would have to make before its first call, taken
 * ahead by this turn once it has replied: the reader has the answer, and the next question finds
 * its history cut already instead of waiting for the summary. Undefined when none is due, when
 * this turn recorded a cut already, when a later turn has started (it cuts for itself), or when
 * this turn alone outgrows the low share (the next turn then cuts it too, as before).
 */
export function historyCutAhead(
  turns: TurnRecord[],
  index: number,
  budgetTokens: number,
  withTools = true,
): { from: number; to: number } | undefined {
  const turn = turns[index];
  if (turn?.ending?.type !== 'AssistantReplied' || turn.historyStart) return undefined;
  if (turns.slice(index + 1).some((t) => t.iterations.length > 0 || t.historyStart || t.ending)) return undefined;
  const window = historyWindow(turns.slice(0, index + 1), index + 1, budgetTokens, withTools);
  if (!window.cut || window.start > index) return undefined;
  return { from: window.cut.from, to: window.start };
}

/** The index of the first turn posted after `version` (at most `limit`). */
function firstAfter(turns: TurnRecord[], version: number, limit: number): number {
  let i = 0;
  while (i < limit && turns[i].postedVersion <= version) i++;
  return i;
}

/** The turns a cut leaves out, as a summary's input: question and answer, the newest within `maxTokens`. */
export function turnsToSummarise(turns: TurnRecord[], from: number, to: number, maxTokens: number): TurnRecord[] {
  let start = to;
  let tokens = 0;
  while (start > from) {
    tokens += pastTurnMessages(turns[start - 1], false).tokens;
    if (tokens > maxTokens) break;
    start--;
  }
  return turns.slice(start, to);
}

/** What a history cut covers: the summary before it, the turns its summary is written from, the versions it records. */
export interface HistoryCut {
  /** the latest summary before the cut: the new summary takes it in */
  previous?: HistoryStart['summary'];
  /** the newest turns the cut leaves out, within what a summary reads */
  summarised: TurnRecord[];
  /** HistorySummarized: from the previous summary's first version (or the first turn summarised) to the cut */
  coversVersions: [number, number];
  /** HistoryTrimmed: the turns the cut leaves out */
  droppedVersions: [number, number];
}

/** The cut of the turns [from, to) made by the turn `turnId`, before its first call or ahead of the next turn. */
export function historyCutOf(
  turns: TurnRecord[],
  turnId: string,
  cut: { from: number; to: number },
  budgetTokens: number,
): HistoryCut {
  const lastCut = turns[cut.to].postedVersion - 1;
  const previous = latestHistoryStart(
    turns,
    turns.findIndex((t) => t.turnId === turnId),
  )?.summary;
  const summarised = turnsToSummarise(turns, cut.from, cut.to, budgetTokens * HISTORY_HIGH_SHARE);
  return {
    previous,
    summarised,
    coversVersions: [previous?.coversVersions[0] ?? summarised[0]?.postedVersion ?? lastCut, lastCut],
    droppedVersions: [turns[cut.from]?.postedVersion ?? lastCut, lastCut],
  };
}

/**
 * The turns a conversation still needs for the turns to come: every turn since the latest cut of
 * the history (a turn to come sends them, or summarises them when it cuts), the turn that
 * recorded that cut, every turn not yet ended and at least `keepEnded` ended ones before it (a
 * reformulated question quotes them). The ended turns are kept rendered: as the messages
 * histories send of them (without tools as well only for a worker that sends such histories,
 * `historiesWithoutTools`), their tool results and citations let go. What is let go has ended:
 * a late job for it finds no turn, which reads as ended. The window is cut once it passes the
 * high share of the budget, so what is kept is bounded by the budget, not by the conversation.
 */
export function turnsStillNeeded(
  turns: TurnRecord[],
  { keepEnded = 3, historiesWithoutTools = true }: { keepEnded?: number; historiesWithoutTools?: boolean } = {},
): TurnRecord[] {
  let firstOpen = turns.findIndex((t) => !t.ending);
  if (firstOpen < 0) firstOpen = turns.length;
  let cutAt = turns.length - 1;
  while (cutAt >= 0 && !turns[cutAt].historyStart) cutAt--;
  const sinceCut =
    cutAt < 0 ? 0 : Math.min(cutAt, firstAfter(turns, turns[cutAt].historyStart!.afterVersion, turns.length));
  const from = Math.max(0, Math.min(sinceCut, firstOpen - keepEnded));
  const kept = turns.slice(from);
  for (let i = from; i < firstOpen; i++) kept[i - from] = rendered(turns[i], historiesWithoutTools);
  return from === 0 && kept.every((t, i) => t === turns[i]) ? turns : kept;
}

/** An ended turn as the messages histories send of it; the same record when it already is. */
function rendered(turn: TurnRecord, withoutTools: boolean): TurnRecord {
  const r = turn.rendered;
  if (r && (r.withoutTools !== undefined) === withoutTools) return turn;
  return {
    turnId: turn.turnId,
    messageId: turn.messageId,
    content: turn.content,
    selectedText: turn.selectedText,
    sourcesNote: turn.sourcesNote,
    postedAt: turn.postedAt,
    postedVersion: turn.postedVersion,
    iterations: [],
    ending: turn.ending,
    historyStart: turn.historyStart,
    batch: turn.batch,
    rendered: {
      withTools: pastTurnMessages(turn, true),
      withoutTools: withoutTools ? pastTurnMessages(turn, false) : undefined,
    },
  };
}
