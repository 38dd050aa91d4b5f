import { LlmMessage, LlmTextBlock, LlmToolResultBlock, LlmToolUseBlock } from '../llm/llm.types';
import { isComplete, IterationRecord, ToolCallRecord, TurnRecord } from './turn-records';

/**
 * The LLM request history, rebuilt from events alone. The same events always give the same
 * messages (text and tool_use blocks in their original order with their original ids), so the
 * prefix of turn N+1 is byte-identical to turn N's request and the prompt cache hits.
 */
export function turnMessages(
  turn: TurnRecord,
  { current, withTools = true }: { current: boolean; withTools?: boolean },
): LlmMessage[] {
  const user: LlmMessage = { role: 'user', content: userBlocks(turn) };
  const answered = turn.ending?.type === 'AssistantReplied';
  // a turn that failed or was cancelled keeps only its question: half a tool exchange is not valid history
  if (!current && !answered) return [user];
  const messages: LlmMessage[] = [user];
  for (const it of withTools ? turn.iterations : []) {
    if (!isComplete(it)) break;
    messages.push({ role: 'assistant', content: assistantBlocks(it) });
    messages.push({
      role: 'user',
      content: it.calls.map((c): LlmToolResultBlock => ({
        type: 'tool_result',
        toolUseId: c.toolUseId,
        content: it.results.get(c.toolUseId)!.content,
        isError: it.results.get(c.toolUseId)!.isError,
      })),
    });
  }
  if (turn.ending?.type === 'AssistantReplied' && turn.ending.content.trim()) {
    messages.push({ role: 'assistant', content: [{ type: 'text', text: turn.ending.content }] });
  }
  return messages;
}

/** The model's blocks in the order it wrote them (older records: the text first, then the calls). */
function assistantBlocks(it: IterationRecord): Array<LlmTextBlock | LlmToolUseBlock> {
  const toolUse = (c: ToolCallRecord): LlmToolUseBlock => ({
    type: 'tool_use',
    id: c.toolUseId,
    name: c.name,
    input: c.input,
  });
  if (!it.assistantContent) {
    return [
      ...(it.assistantText.trim() ? [{ type: 'text' as const, text: it.assistantText }] : []),
      ...it.calls.map(toolUse),
    ];
  }
  const calls = new Map(it.calls.map((c) => [c.toolUseId, c]));
  return it.assistantContent.flatMap((b): Array<LlmTextBlock | LlmToolUseBlock> => {
    if (b.type === 'text') return b.text.trim() ? [{ type: 'text', text: b.text }] : [];
    const call = calls.get(b.toolUseId);
    return call ? [toolUse(call)] : [];
  });
}

function userBlocks(turn: TurnRecord): LlmTextBlock[] {
  const blocks: LlmTextBlock[] = [];
  if (turn.selectedText?.trim()) {
    blocks.push({
      type: 'text',
      text: `The reader highlighted this passage:\n<selected_text>\n${turn.selectedText}\n</selected_text>`,
    });
  }
  blocks.push({ type: 'text', text: turn.content });
  return blocks;
}

/** Rough token estimate (≈ 4 characters a token): enough to keep a budget. */
export const estimateTokens = (messages: LlmMessage[]): number => Math.ceil(JSON.stringify(messages).length / 4);

/**
 * A past turn's messages and their token estimate, built once per turn record: records do not
 * change (a fold copies a turn it changes), so every later turn and step reuses them instead of
 * rebuilding and measuring the whole window again.
 */
const pastTurns = { withTools: new WeakMap<TurnRecord, PastTurn>(), withoutTools: new WeakMap<TurnRecord, PastTurn>() };
interface PastTurn {
  messages: LlmMessage[];
  tokens: number;
}
function pastTurnMessages(turn: TurnRecord, withTools: boolean): PastTurn {
  const memo = withTools ? pastTurns.withTools : pastTurns.withoutTools;
  let past = memo.get(turn);
  if (!past) {
    const messages = turnMessages(turn, { current: false, withTools });
    past = { messages, tokens: estimateTokens(messages) };
    memo.set(turn, past);
  }
  return past;
}

/**
 * The history for the current turn: earlier turns, newest kept first within the token budget
 * (whole turns only, so no tool_use is separated from its tool_result), then the current turn.
 * Consecutive user messages (after a turn without an answer) are merged, results first.
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
  let budget = budgetTokens - estimateTokens(current);
  const earlier: LlmMessage[][] = [];
  for (let i = index - 1; i >= 0; i--) {
    // a turn kept without its tool exchanges is past what a history with tools reaches
    if (withTools && turns[i].toolExchangesDropped) break;
    const { messages: m, tokens: cost } = pastTurnMessages(turns[i], withTools);
    if (cost > budget) break;
    budget -= cost;
    earlier.unshift(m);
  }
  const prefix = mergeUserRuns(earlier.flat());
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

/**
 * The turns a conversation still needs for the turns to come: every turn from the oldest one not
 * yet ended, and before it the ended turns that a history within `budgetTokens` can still reach
 * (at least `keepEnded` of them, which a reformulated question quotes). A turn to come reaches
 * back at most as far as one starting right after the ended turns with the whole budget. A
 * history with tool exchanges reaches fewer turns than one without (question and answer only,
 * the always-retrieve plan's), so the turns only the latter can reach are kept without their
 * tool exchanges, and those neither can reach are let go: nothing a history could send is lost,
 * and what is kept is bounded by the budget, not by the conversation. What is let go has ended:
 * a late job for it finds no turn, which reads as ended. A worker that never sends a history
 * without tools (`historiesWithoutTools: false`: the tool-use loop only) keeps no such turns at
 * all, so its folds reach their bound within a few turns.
 */
export function turnsStillNeeded(
  turns: TurnRecord[],
  budgetTokens: number,
  { keepEnded = 3, historiesWithoutTools = true }: { keepEnded?: number; historiesWithoutTools?: boolean } = {},
): TurnRecord[] {
  let firstOpen = turns.findIndex((t) => !t.ending);
  if (firstOpen < 0) firstOpen = turns.length;
  const reach = (withTools: boolean): number => {
    let budget = budgetTokens;
    let from = firstOpen;
    while (from > 0) {
      const { tokens } = pastTurnMessages(turns[from - 1], withTools);
      if (tokens > budget && firstOpen - from >= keepEnded) break;
      budget -= tokens;
      from--;
    }
    return from;
  };
  const withToolsFrom = reach(true);
  const from = historiesWithoutTools ? Math.min(reach(false), withToolsFrom) : withToolsFrom;
  if (from === 0 && withToolsFrom === 0) return turns;
  const kept = turns.slice(from);
  for (let i = 0; i < withToolsFrom - from; i++) kept[i] = withoutToolExchanges(kept[i]);
  return from === 0 && kept.every((t, i) => t === turns[i]) ? turns : kept;
}

/** An ended turn as a history without tools sends it: its question and its answer. */
function withoutToolExchanges(turn: TurnRecord): TurnRecord {
  return turn.toolExchangesDropped ? turn : { ...turn, iterations: [], toolExchangesDropped: true };
}
