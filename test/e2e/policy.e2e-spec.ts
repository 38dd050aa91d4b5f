import { expectOk, turnOf } from '../support/api';
import { defaultReply } from '../support/fake-anthropic/default-responder';
import { FakeAnthropic, FakeReply, RecordedRequest } from '../support/fake-anthropic/fake-anthropic.server';
import { useReaderStack } from '../support/use-stack';
import { waitFor } from '../support/wait-for';

const SERVER_MODEL = 'claude-sonnet-5-5';
const lastUserText = (r: RecordedRequest): string => JSON.stringify(r.body.messages[r.body.messages.length - 1]);
const forQuestion = (fake: FakeAnthropic, marker: string) =>
  fake.requests.filter((r) => JSON.stringify(r.body.messages).includes(marker));

/** A conversation's policy (PATCH …/conversations/:id {policy}): recorded as PolicyChanged, run by the turns posted after it. */
describe('conversation policy (e2e, real SDK against the fake Messages API)', () => {
  const s = useReaderStack({
    fake: {
      defaultResponder: (req): FakeReply => {
        const toolsAllowed = req.body.tools?.length && req.body.tool_choice?.type !== 'none';
        // LOOP: search for ever, while tools are allowed; SLOWTOOL: a first call that takes a while
        if (lastUserText(req).includes('LOOP') && toolsAllowed)
          return { content: [{ type: 'tool_use', name: 'search_book', input: { query: 'lamp' } }] };
        if (lastUserText(req).includes('SLOWTOOL') && toolsAllowed)
          return {
            content: [{ type: 'tool_use', name: 'search_book', input: { query: 'lamp '.repeat(40) } }],
            delayMsPerChunk: 150,
          };
        return defaultReply(req);
      },
    },
    env: { LLM_MODEL: SERVER_MODEL, AGENT_MAX_ITERATIONS: '5', POLICY_MODELS: 'claude-haiku-4-5' },
  });
  const { conversation, events, ask } = s;
  const patch = (id: string, body: object) => s.alice.req('PATCH', `/v1/conversations/${id}`, body);
  const show = async (id: string, version?: number) =>
    (await s.alice.req('GET', `/v1/conversations/${id}${version ? `?version=${version}` : ''}`)).body;

  it('records a change as PolicyChanged with the whole policy, shows it, and the policy of every version', async () => {
    const id = await conversation();
    const first = await patch(id, { policy: { model: 'claude-haiku-4-5', maxIterations: 2 } });
    expect(first.status).toBe(200);
    expect(first.body.policy).toEqual({ model: 'claude-haiku-4-5', maxIterations: 2 });
    const second = await patch(id, { policy: { model: null, instructions: 'Answer in one sentence.' } });
    expect(second.body.policy).toEqual({ maxIterations: 2, instructions: 'Answer in one sentence.' });
    const log = await events(id);
    expect(log.filter((e) => e.type === 'PolicyChanged').map((e) => e.data)).toEqual([
      { policy: { model: 'claude-haiku-4-5', maxIterations: 2 } },
      { policy: { maxIterations: 2, instructions: 'Answer in one sentence.' } },
    ]);
    expect((await show(id, 1)).policy).toEqual({});
    expect((await show(id, 2)).policy).toEqual({ model: 'claude-haiku-4-5', maxIterations: 2 });
    // the same policy again: nothing appended
    const again = await patch(id, { policy: { maxIterations: 2 } });
    expect(again.status).toBe(200);
    expect(again.body.version).toBe(second.body.version);
  });

  it('refuses values out of range with a 400 that names the field, and changes nothing', async () => {
    const id = await conversation();
    const version = (await show(id)).version;
    const bad: Array<[object, string]> = [
      [{ maxIterations: 0 }, 'policy.maxIterations'],
      [{ maxIterations: 6 }, 'policy.maxIterations'],
      [{ maxIterations: 1.5 }, 'policy.maxIterations'],
      [{ contextBudgetTokens: 100 }, 'policy.contextBudgetTokens'],
      [{ contextBudgetTokens: 1_000_000 }, 'policy.contextBudgetTokens'],
      [{ instructions: 'x'.repeat(2_001) }, 'policy.instructions'],
      [{ retrievalMode: 'sometimes' }, 'policy.retrievalMode'],
      [{ model: 'Not A Model!' }, 'policy.model'],
      [{ model: 'gpt-9-turbo' }, 'policy.model'],
      [{ temperature: 0.5 }, 'policy.temperature'],
    ];
    for (const [policy, field] of bad) {
      const r = await patch(id, { policy });
      expect({ policy, status: r.status }).toEqual({ policy, status: 400 });
      expect(JSON.stringify(r.body.errors)).toContain(field);
    }
    expect((await show(id)).version).toBe(version);
  });

  it('refuses a priced model the operator does not list in POLICY_MODELS with 400 model_not_allowed, and changes nothing', async () => {
    const id = await conversation();
    const version = (await show(id)).version;
    // priced in the shipped table, and dearer than the listed one: the reader may not pick it
    const refused = await patch(id, { policy: { model: 'claude-opus-5', retrievalMode: 'whole-book' } });
    expect(refused.status).toBe(400);
    expect(refused.body).toMatchObject({ code: 'model_not_allowed', errors: [{ field: 'policy.model' }] });
    expect(refused.body.detail).toContain('claude-haiku-4-5');
    expect((await show(id)).version).toBe(version);
    // the server's own model needs no listing
    expect((await patch(id, { policy: { model: SERVER_MODEL } })).status).toBe(200);
  });

  it('runs a turn by its policy: model, instructions, max iterations', async () => {
    const id = await conversation();
    await patch(id, {
      policy: { model: 'claude-haiku-4-5', maxIterations: 2, instructions: 'Be brief, PARLEY-TEST.' },
    });
    const { ending } = await ask(id, 'LOOP: where is the lamp?');
    expect(ending.type).toBe('AssistantReplied');
    const calls = forQuestion(s.fake, 'LOOP: where is the lamp?');
    expect(calls).toHaveLength(2);
    for (const r of calls) {
      expect(r.body.model).toBe('claude-haiku-4-5');
      expect(JSON.stringify(r.body.system)).toContain('PARLEY-TEST');
    }
    expect(calls[1].body.tool_choice).toEqual({ type: 'none' }); // the last allowed call must answer
    expect((ending.data as { iterations: number }).iterations).toBe(2);
  });

  it('searches first and answers with the passages when the policy says always-retrieve', async () => {
    const id = await conversation();
    await patch(id, { policy: { retrievalMode: 'always-retrieve' } });
    const { ending } = await ask(id, 'RETRIEVE: what did Marisol find?');
    expect(ending.type).toBe('AssistantReplied');
    const calls = forQuestion(s.fake, 'RETRIEVE: what did Marisol find?');
    expect(calls.some((r) => JSON.stringify(r.body.system).includes('You write search queries.'))).toBe(true);
    expect(calls.every((r) => !r.body.tools?.length)).toBe(true);
  });

  it('leaves a running turn on the policy it was posted with; the next turn takes the new one', async () => {
    const id = await conversation();
    const { turnId } = expectOk(
      await s.alice.api.POST('/v1/conversations/{id}/messages', {
        params: { path: { id } },
        body: { content: 'SLOWTOOL: the keeper?' },
      }),
      202,
    );
    await waitFor(
      'the first call to start',
      async () => forQuestion(s.fake, 'SLOWTOOL: the keeper?').length > 0 || undefined,
    );
    expect((await patch(id, { policy: { model: 'claude-haiku-4-5' } })).status).toBe(200);
    await waitFor(`turn ${turnId} to end`, async () =>
      (await events(id)).find((e) => turnOf(e) === turnId && e.type === 'AssistantReplied'),
    );
    const running = forQuestion(s.fake, 'SLOWTOOL: the keeper?');
    expect(running.length).toBe(2);
    expect(running.map((r) => r.body.model)).toEqual([SERVER_MODEL, SERVER_MODEL]);
    await ask(id, 'NEXT: and the ship?');
    const next = forQuestion(s.fake, 'NEXT: and the ship?');
    expect(next.map((r) => r.body.model)).toEqual(['claude-haiku-4-5', 'claude-haiku-4-5']);
  });
});
