import { citationStartFor, ToolRegistry, turnEvent } from '@parley/agent';
import { ConversationEvent } from '@parley/conversation';
import { NewEvent } from '@parley/event-store';
import { LoadedTurn } from './conversation-folds';

/** The always-retrieve plan's second search (RETRIEVAL_HYDE) is told apart by its toolUseId. */
export const HYDE_PREFIX = 'hyde_';
export const isHydeCall = (toolUseId: string) => toolUseId.startsWith(HYDE_PREFIX);

export interface ToolCall {
  toolUseId: string;
  name: string;
  input: unknown;
}

/**
 * Every pending call of the iteration, in parallel; results recorded together, in call order.
 * The always-retrieve plan's HyDE search runs after the query's, leaving out the passages the
 * query already found (the answer reads both: no passage twice).
 */
export async function runToolCalls(
  tools: ToolRegistry,
  loaded: LoadedTurn,
  calls: ToolCall[],
): Promise<NewEvent<ConversationEvent>[]> {
  const turn = loaded.turn!;
  const run = async (c: ToolCall, excludeChunkIds?: string[]) => {
    const citationStart = citationStartFor(turn, c.toolUseId);
    const out = await tools.run(c.name, c.input, { ...loaded.ctx, citationStart, excludeChunkIds }, c.toolUseId);
    return { c, out, citationStart };
  };
  const first = calls.filter((c) => !isHydeCall(c.toolUseId));
  const outputs = await Promise.all(first.map((c) => run(c)));
  const seen = () => outputs.flatMap(({ out }) => (out.chunks ?? []).map((ch) => ch.chunkId));
  for (const c of calls.filter((c) => isHydeCall(c.toolUseId))) outputs.push(await run(c, seen()));
  outputs.sort((a, b) => calls.indexOf(a.c) - calls.indexOf(b.c));
  return outputs.map(({ c, out, citationStart }) =>
    turnEvent(loaded, turn.turnId, 'ToolResultRecorded', {
      turnId: turn.turnId,
      toolUseId: c.toolUseId,
      content: out.content,
      isError: out.isError ?? false,
      ...(out.chunks ? { chunks: out.chunks, citationStart } : {}),
    }),
  );
}
