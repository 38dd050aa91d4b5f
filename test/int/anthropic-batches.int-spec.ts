import {
  AnthropicLlm,
  batchCustomId,
  costUsd,
  LlmCallPending,
  LlmCallSubmitted,
  LlmError,
  LlmMessage,
} from '@parley/agent';
import { apiError, FakeAnthropic } from '../support/fake-anthropic/fake-anthropic.server';

/** The adapter's Message Batches path, on the real SDK against the fake API: submit, wait, answer. */
describe('AnthropicLlm through the Message Batches API', () => {
  let fake: FakeAnthropic;
  let llm: AnthropicLlm;
  const question: LlmMessage[] = [{ role: 'user', content: [{ type: 'text', text: 'Who is Marisol?' }] }];
  const callId = 'c0ffee00-0000-4000-8000-000000000001/reply/1';

  beforeAll(async () => {
    fake = await FakeAnthropic.start({ holdBatches: true });
    llm = new AnthropicLlm({
      model: 'claude-sonnet-5-5',
      maxTokens: 256,
      maxRetries: 0,
      apiKey: 'k',
      baseUrl: fake.url,
    });
  });
  afterEach(() => fake.reset());
  afterAll(() => fake.close());

  /** The error a call throws (they all throw but the last). */
  const thrown = (providerBatchId?: string) =>
    llm.chatWithTools(question, [], { system: 'sys', viaBatch: { callId, providerBatchId } }).then(
      () => undefined,
      (e: unknown) => e,
    );

  it('submits the call once as a batch of one, says it is pending until the batch ends, then answers from it', async () => {
    fake.enqueue({ content: [{ type: 'text', text: 'A keeper [1].' }] });
    const submitted = await thrown();
    expect(submitted).toBeInstanceOf(LlmCallSubmitted);
    const { providerBatchId } = submitted as LlmCallSubmitted;
    expect(fake.batches).toHaveLength(1);
    const [request] = fake.batches[0].requests;
    expect(request.custom_id).toBe(batchCustomId(callId));
    expect(request.params).not.toHaveProperty('stream');
    expect(request.params.system[0].cache_control).toEqual({ type: 'ephemeral' });

    const pending = await thrown(providerBatchId);
    expect(pending).toBeInstanceOf(LlmCallPending);
    expect((pending as LlmCallPending).status).toBe('in_progress');

    fake.endBatches();
    const result = await llm.chatWithTools(question, [], { system: 'sys', viaBatch: { callId, providerBatchId } });
    expect(result).toMatchObject({ content: [{ type: 'text', text: 'A keeper [1].' }], batched: true });
    expect(result.usage.outputTokens).toBeGreaterThan(0);
    expect(fake.batches).toHaveLength(1); // looking again never submits again
    expect(costUsd(result.model, result.usage, { batched: true })).toBeCloseTo(
      costUsd(result.model, result.usage) / 2,
      6,
    );
  });

  it('turns an errored request into an LlmError the turn can record', async () => {
    fake.enqueue(apiError(529, 'overloaded'));
    const { providerBatchId } = (await thrown()) as LlmCallSubmitted;
    fake.endBatches();
    const e = await thrown(providerBatchId);
    expect(e).toBeInstanceOf(LlmError);
    expect(e).toMatchObject({ code: 'llm_overloaded', retryable: true });
  });

  it('keeps a custom_id the API accepts, whatever the step key', () => {
    expect(batchCustomId('a/b c/1')).toBe('a_b_c_1');
    expect(batchCustomId('x'.repeat(80))).toHaveLength(64);
  });
});
