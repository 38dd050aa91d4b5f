import { LlmMessage } from '../llm/llm.types';
import { historyWindow } from './history-cut';
import { TurnRecord } from './turn-fold';
import { pastTurnMessages, summaryMessage, turnMessages } from './turn-messages';

/**
 * The history for the current turn: the window's summary, the window's earlier turns (whole
 * turns, so no tool_use is separated from its tool_result), then the current turn. Consecutive
 * user messages (after a turn without an answer, or the summary) are merged, results first.
 * `prefixEnd` is the last message of the stable prefix, for a cache breakpoint.
 */
export function buildHistory(
  turns: TurnRecord[],
  currentTurnId: string,
  budgetTokens: number,
  opts: { withTools?: boolean; currentMessages?: LlmMessage[] } = {},
): { messages: LlmMessage[]; prefixEnd: number } {
  const index = turns.findIndex((t) => t.turnId === currentTurnId);
  if (index < 0) throw new Error(`turn ${currentTurnId} is not in the conversation`);
  const withTools = opts.withTools ?? true;
  const current = opts.currentMessages ?? turnMessages(turns[index], { current: true, withTools });
  const window = historyWindow(turns, index, budgetTokens, withTools);
  const earlier: LlmMessage[] = window.summary ? [summaryMessage(window.summary.text)] : [];
  for (let i = window.start; i < index; i++) earlier.push(...pastTurnMessages(turns[i], withTools).messages);
  const prefix = mergeUserRuns(earlier);
  const messages = mergeUserRuns([...prefix, ...current]);
  // the last message of the stable prefix, unless merging folded it into the current turn's first
  const prefixEnd =
    prefix.length > 0 &&
    messages.length > prefix.length - 1 &&
    messages[prefix.length - 1] === prefix[prefix.length - 1]
      ? prefix.length - 1
      : -1;
  return { messages, prefixEnd };
}

function mergeUserRuns(messages: LlmMessage[]): LlmMessage[] {
  const out: LlmMessage[] = [];
  for (const m of messages) {
    const last = out[out.length - 1];
    if (last && last.role === 'user' && m.role === 'user') {
      const blocks = [...last.content, ...m.content];
      // tool results must come first in a user message
      out[out.length - 1] = {
        role: 'user',
        content: [...blocks.filter((b) => b.type === 'tool_result'), ...blocks.filter((b) => b.type !== 'tool_result')],
      };
    } else {
      out.push(m);
    }
  }
  return out;
}
