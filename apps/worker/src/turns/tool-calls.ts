import {
  AgentCommand,
  citationStartFor,
  isHydeCall,
  newStep,
  numberedPassagesOf,
  ToolCallRecord,
  ToolOutput,
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
    const denied = call.approval?.decided?.approved === false ? call.approval.decided : undefined;
    const output = denied ? denialOf(denied) : await tools.run(call.name, call.input, ctx, call.toolUseId);
    return { call, output, citationStart };
  };
  const outputs = await Promise.all(calls.filter((c) => !isHydeCall(c.toolUseId)).map((c) => run(c)));
  const seen = () => outputs.flatMap(({ output }) => (output.chunks ?? []).map((ch) => ch.chunkId));
  for (const c of calls.filter((c) => isHydeCall(c.toolUseId))) outputs.push(await run(c, seen()));
  outputs.sort((a, b) => calls.indexOf(a.call) - calls.indexOf(b.call));
  return { type: 'RecordToolResults', turnId: turn.turnId, ...newStep(), outputs };
}

/** What the model reads for a call the reader did not approve: it was not made, and why. */
function denialOf(decided: { reason?: string; by: 'reader' | 'timeout' }): ToolOutput {
  const why = decided.by === 'timeout' ? 'no answer came before the request expired' : 'the reader declined it';
  const reason = decided.by === 'reader' && decided.reason ? ` Their reason: ${decided.reason}` : '';
  return { isError: true, content: `This call was not made: ${why}.${reason} Do not try it again in this turn.` };
}
