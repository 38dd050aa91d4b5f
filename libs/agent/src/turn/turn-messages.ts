import { LlmMessage, LlmTextBlock, LlmToolResultBlock, LlmToolUseBlock } from '../llm/llm.types';
import { isComplete, IterationRecord, PastTurn, ToolCallRecord, TurnRecord } from './turn-fold';

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
  const blocks: LlmTextBlock[] = turn.sourcesNote ? [{ type: 'text', text: turn.sourcesNote }] : [];
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
 * rebuilding and measuring the whole window again. A rendered record carries them itself.
 */
const pastTurns = { withTools: new WeakMap<TurnRecord, PastTurn>(), withoutTools: new WeakMap<TurnRecord, PastTurn>() };
export function pastTurnMessages(turn: TurnRecord, withTools: boolean): PastTurn {
  const kept = withTools ? turn.rendered?.withTools : turn.rendered?.withoutTools;
  if (kept) return kept;
  const memo = withTools ? pastTurns.withTools : pastTurns.withoutTools;
  let past = memo.get(turn);
  if (!past) {
    const messages = turnMessages(turn, { current: false, withTools });
    past = { messages, tokens: estimateTokens(messages) };
    memo.set(turn, past);
  }
  return past;
}

/** The summary as histories send it: a user message before the first turn shown. */
export function summaryMessage(text: string): LlmMessage {
  return {
    role: 'user',
    content: [
      {
        type: 'text',
        text: `A summary of the earlier conversation, whose turns are no longer shown:\n<conversation_summary>\n${text}\n</conversation_summary>`,
      },
    ],
  };
}
