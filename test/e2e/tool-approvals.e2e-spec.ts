import path from 'node:path';
import { isEvent, turnOf } from '../support/api';
import { forecastTool, postcardTool, TestToolServer } from '../support/mcp-tool-server';
import { SERVICE_NODE_ARGS, startProcess } from '../support/stack';
import { clientFor } from '../support/stack';
import { useReaderStack } from '../support/use-stack';
import { waitFor } from '../support/wait-for';

const ROOT = path.resolve(__dirname, '../..');

/**
 * Approvals from outside: an operator's MCP server with a free tool and one that needs the
 * reader's approval; the turn stops durably before the second, across a kill -9 of every Parley
 * process, and goes on from the log once the reader answers over HTTP.
 */
describe('tool approvals (e2e: the official MCP SDK on both sides, the Anthropic SDK against the fake)', () => {
  let travel: TestToolServer;
  beforeAll(async () => {
    travel = await TestToolServer.start({ tools: [forecastTool, postcardTool] });
  });
  afterAll(() => travel.stop());

  const s = useReaderStack({
    env: () => ({
      MCP_TOOL_SERVERS: JSON.stringify({ travel: { url: travel.url, approval: ['send_postcard'] } }),
    }),
  });
  const ask = (city: string, to: string) =>
    `Plan my trip. CALL:travel__forecast {"city": "${city}"} CALL:travel__send_postcard {"to": "${to}", "message": "Wish you were here"}`;
  const post = async (id: string, content: string) => {
    const r = await s.alice.api.POST('/v1/conversations/{id}/messages', {
      params: { path: { id } },
      body: { content },
    });
    expect(r.response.status).toBe(202);
    return r.data!.turnId;
  };
  const approvals = (id: string, turnId: string, body: object, client = s.alice) =>
    client.req('POST', `/v1/conversations/${id}/turns/${turnId}/approvals`, body);
  const postcardsTo = (to: string) => travel.calls.filter((c) => (c.input as { to?: string }).to === to).length;
  const forecastsFor = (city: string) =>
    travel.calls.filter((c) => (c.input as { city?: string }).city === city).length;
  const waitingCall = async (id: string, turnId: string) => {
    const asked = await waitFor(
      'the turn to ask for approval',
      async () => (await s.events(id)).filter(isEvent('ToolApprovalRequested')).find((e) => turnOf(e) === turnId),
      30_000,
      100,
    );
    return asked.data;
  };
  const ending = (id: string, turnId: string) =>
    waitFor(
      'the turn to end',
      async () =>
        (await s.events(id)).find(
          (e) => turnOf(e) === turnId && ['AssistantReplied', 'TurnFailed', 'TurnCancelled'].includes(e.type),
        ),
      40_000,
      100,
    );

  /** kill -9 of the API and the worker, and new ones on the same address: nothing of the wait is in any process. */
  async function restartEverything(): Promise<void> {
    const { stack } = s;
    for (const p of [...stack.apis, ...stack.workers]) {
      p.child.kill('SIGKILL');
      await waitFor(`${p.name} to exit`, () => p.child.exitCode !== null || p.child.signalCode !== null);
    }
    const old = stack.apis[0];
    const api = startProcess('api-again', [...SERVICE_NODE_ARGS, path.join(ROOT, 'dist/apps/api/src/main.js')], {
      ...stack.env,
      PORT: new URL(old.base).port,
    });
    stack.apis.push({ ...api, base: old.base });
    await stack.startWorker();
    await waitFor(
      'the new API /readyz',
      async () => (await fetch(`${old.base}/readyz`).catch(() => undefined))?.ok,
      30_000,
      100,
    );
  }

  it('calls the free tool once, waits for the approval across a restart of every process, then calls the other once', async () => {
    const id = await s.conversation();
    const turnId = await post(id, ask('Lisbon', 'Ann'));
    const asked = await waitingCall(id, turnId);
    expect(asked).toMatchObject({ tool: 'travel__send_postcard', input: { to: 'Ann', message: 'Wish you were here' } });
    expect(forecastsFor('Lisbon')).toBe(1);
    expect(postcardsTo('Ann')).toBe(0);

    await restartEverything();
    expect(postcardsTo('Ann')).toBe(0);
    // another reader cannot answer it
    const mallory = clientFor(s.stack.base, `mallory-${Date.now()}`);
    expect((await approvals(id, turnId, { toolCallId: asked.toolCallId, approved: true }, mallory)).status).toBe(404);

    const approved = await approvals(id, turnId, { toolCallId: asked.toolCallId, approved: true });
    expect(approved.status).toBe(202);
    expect(approved.body).toMatchObject({ turnId, toolCallId: asked.toolCallId, approved: true });
    const end = await ending(id, turnId);
    expect(end.type).toBe('AssistantReplied');
    expect((end.data as { content: string }).content).toContain('Postcard sent to Ann');
    expect(postcardsTo('Ann')).toBe(1);
    expect(forecastsFor('Lisbon')).toBe(1);
    // a second answer is refused, and changes nothing
    const again = await approvals(id, turnId, { toolCallId: asked.toolCallId, approved: false });
    expect(again.status).toBe(409);
    expect(again.body.code).toBe('approval_decided');
    expect(postcardsTo('Ann')).toBe(1);
  }, 120_000);

  it('does not call a declined tool: the model reads that it was declined, and the turn is answered', async () => {
    const id = await s.conversation();
    const turnId = await post(id, ask('Porto', 'Bob'));
    const asked = await waitingCall(id, turnId);
    const declined = await approvals(id, turnId, {
      toolCallId: asked.toolCallId,
      approved: false,
      reason: 'too early',
    });
    expect(declined.status).toBe(202);
    const end = await ending(id, turnId);
    expect(end.type).toBe('AssistantReplied');
    expect(postcardsTo('Bob')).toBe(0);
    const result = (await s.events(id))
      .filter(isEvent('ToolResultRecorded'))
      .find((e) => e.data.toolUseId === asked.toolCallId)!;
    expect(result.data).toMatchObject({ isError: true, content: expect.stringContaining('too early') });
    // a body the route does not take is a 400 that changes nothing
    const bad = await approvals(id, turnId, { toolCallId: asked.toolCallId, approved: 'yes' });
    expect(bad.status).toBe(400);
  }, 60_000);
});
