/**
 * Peer: the search turn as a DBOS durable workflow (system database in a private Postgres database):
 * one workflow per turn, each model call (the SDK, streaming) and the tool run a DBOS step. History
 * is the workflow's input and output, so DBOS checkpoints it with the workflow, as its chat examples do.
 */
import { roundTripCounts } from '../trace-round-trips';
import Anthropic from '@anthropic-ai/sdk';
import { DBOS } from '@dbos-inc/dbos-sdk';
import { measureTurns, PASSAGE, PeerResult, withPrivateDb } from './common';

const TOOLS: Anthropic.Tool[] = [
  {
    name: 'search_book',
    description: 'Search the book for passages',
    input_schema: { type: 'object', properties: { query: { type: 'string' } }, required: ['query'] },
  },
];

function searchTurnWorkflow(sdk: Anthropic) {
  const callModel = (messages: Anthropic.MessageParam[]) =>
    DBOS.runStep(
      () =>
        sdk.messages
          .stream({
            model: 'claude-sonnet-5-5',
            max_tokens: 1024,
            system: 'You answer from the book.',
            tools: TOOLS,
            messages,
          })
          .finalMessage(),
      { name: 'callModel' },
    );
  return DBOS.registerWorkflow(
    async (history: Anthropic.MessageParam[], question: string): Promise<Anthropic.MessageParam[]> => {
      const messages = [...history, { role: 'user' as const, content: question }];
      for (let i = 0; i < 5; i++) {
        const msg = await callModel(messages);
        messages.push({ role: 'assistant', content: msg.content });
        const uses = msg.content.filter((b): b is Anthropic.ToolUseBlock => b.type === 'tool_use');
        if (!uses.length) break;
        const results = await DBOS.runStep(async () => uses.map(() => PASSAGE), { name: 'searchBook' });
        messages.push({
          role: 'user',
          content: uses.map((u, j) => ({ type: 'tool_result' as const, tool_use_id: u.id, content: results[j] })),
        });
      }
      return messages;
    },
    { name: 'searchTurn' },
  );
}

export async function dbosPeer(fakeUrl: string, turns = 40): Promise<PeerResult> {
  return withPrivateDb(async (dbUrl) => {
    const workflow = searchTurnWorkflow(new Anthropic({ baseURL: fakeUrl, apiKey: 'sk-fake', maxRetries: 0 }));
    DBOS.setConfig({ name: 'parley-peer', systemDatabaseUrl: dbUrl });
    await DBOS.launch();
    try {
      let history: Anthropic.MessageParam[] = [];
      return await measureTurns(
        turns,
        async (q) => {
          history = await workflow(history, q);
        },
        roundTripCounts,
      );
    } finally {
      await DBOS.shutdown();
    }
  });
}
