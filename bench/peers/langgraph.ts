/**
 * Peer: LangGraph's prebuilt ReAct agent (ChatAnthropic, streaming, against the fake Messages API)
 * checkpointed by PostgresSaver in a private database, one thread over N search turns. Same method
 * as sdkLoopAnchor: this process's CPU per turn, mean of turns 11–40; Postgres statements counted
 * by the pg patch in trace-round-trips (imported first, before anything loads pg).
 */
import { roundTripCounts } from '../trace-round-trips';
import { ChatAnthropic } from '@langchain/anthropic';
import { HumanMessage } from '@langchain/core/messages';
import { tool } from '@langchain/core/tools';
import { PostgresSaver } from '@langchain/langgraph-checkpoint-postgres';
import { z } from 'zod';
import { measureTurns, PASSAGE, PeerResult, withPrivateDb } from './common';

// the repo's moduleResolution (node10) cannot see package subpath exports: types by file path, value at runtime
type Prebuilt = typeof import('@langchain/langgraph/dist/prebuilt/index');
// eslint-disable-next-line @typescript-eslint/no-require-imports
const { createReactAgent } = require('@langchain/langgraph/prebuilt') as Prebuilt;

export async function langGraphPeer(fakeUrl: string, turns = 40): Promise<PeerResult> {
  return withPrivateDb(async (dbUrl) => {
    const checkpointer = PostgresSaver.fromConnString(dbUrl);
    await checkpointer.setup();
    try {
      const search = tool(async () => PASSAGE, {
        name: 'search_book',
        description: 'Search the book for passages',
        schema: z.object({ query: z.string() }),
      });
      const llm = new ChatAnthropic({
        model: 'claude-sonnet-5-5',
        apiKey: 'sk-fake',
        anthropicApiUrl: fakeUrl,
        streaming: true,
        maxRetries: 0,
      });
      // the fake follows an API version without sampling parameters: send none
      Reflect.set(llm, 'temperature', undefined);
      Reflect.set(llm, 'topK', undefined);
      Reflect.set(llm, 'topP', undefined);
      const agent = createReactAgent({ llm, tools: [search], checkpointer, prompt: 'You answer from the book.' });
      const config = { configurable: { thread_id: 'bench-thread' } };
      return await measureTurns(
        turns,
        async (q) => {
          await agent.invoke({ messages: [new HumanMessage(q)] }, config);
        },
        roundTripCounts,
      );
    } finally {
      await checkpointer.end();
    }
  });
}
