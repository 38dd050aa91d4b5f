import {
  AgentCommand,
  citationStartFor,
  isHydeCall,
  newStep,
  numberedPassagesOf,
  ToolCallRecord,
  ToolRegistry,
} from '@parley/agent';
import { TurnView } from './conversation-folds';

/**
 * Every pending call of the iteration, in parallel; results recorded together, in call order.
 * The always-retrieve plan's HyDE search runs after the query's, leaving out the passages the
 * query already found (the answer reads both: no passage twice).
 */
export async function runToolCalls(
  tools: ToolRegistry,
  { turn, ctx: toolContext }: TurnView,
  calls: ToolCallRecord[],
): Promise<AgentCommand> {
  const numberedPassages = new Map([...numberedPassagesOf(turn)].map(([n, c]) => [n, c.chunkId]));
  const run = async (call: ToolCallRecord, excludeChunkIds?: string[]) => {
    const citationStart = citationStartFor(turn, call.toolUseId);
    const ctx = { ...toolContext, citationStart, excludeChunkIds, numberedPassages };
    const output = await tools.run(call.name, call.input, ctx, call.toolUseId);
    return { call, output, citationStart };
  };
  const outputs = await Promise.all(calls.filter((c) => !isHydeCall(c.toolUseId)).map((c) => run(c)));
  const seen = () => outputs.flatMap(({ output }) => (output.chunks ?? []).map((ch) => ch.chunkId));
  for (const c of calls.filter((c) => isHydeCall(c.toolUseId))) outputs.push(await run(c, seen()));
  outputs.sort((a, b) => calls.indexOf(a.call) - calls.indexOf(b.call));
  return { type: 'RecordToolResults', turnId: turn.turnId, ...newStep(), outputs };
}
