import { AnthropicLlm, batchCustomId, ChatOutcome, LlmError, LlmMessage, priceTableWith } from '@parley/agent';
import { apiError, FakeAnthropic } from '../support/fake-anthropic/fake-anthropic.server';

/** The shipped prices (no LLM_PRICES here). */
const { costUsd } = priceTableWith();

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

  /** The call through the batch holding it (submitted in a new one when there is none yet). */
  const viaBatch = (providerBatchId?: string): Promise<ChatOutcome> =>
    llm.chatWithTools(question, [], { system: 'sys', viaBatch: { callId, providerBatchId } });

  it('submits the call once as a batch of one, says it is pending until the batch ends, then answers from it', async () => {
    fake.enqueue({ content: [{ type: 'text', text: 'A keeper [1].' }] });
    const submitted = await viaBatch();
    expect(submitted).toEqual({ kind: 'submitted', providerBatchId: expect.stringMatching(/^msgbatch_/) });
    const { providerBatchId } = submitted as Extract<ChatOutcome, { kind: 'submitted' }>;
    expect(fake.batches).toHaveLength(1);
    const [request] = fake.batches[0].requests;
    expect(request.custom_id).toBe(batchCustomId(callId));
    expect(request.params).not.toHaveProperty('stream');
    expect(request.params.system[0].cache_control).toEqual({ type: 'ephemeral' });

    expect(await viaBatch(providerBatchId)).toEqual({ kind: 'pending', providerBatchId, status: 'in_progress' });

    fake.endBatches();
    const answered = await viaBatch(providerBatchId);
    expect(answered).toMatchObject({
      kind: 'answered',
      result: { content: [{ type: 'text', text: 'A keeper [1].' }], batched: true },
    });
    const { result } = answered as Extract<ChatOutcome, { kind: 'answered' }>;
    expect(result.usage.outputTokens).toBeGreaterThan(0);
    expect(fake.batches).toHaveLength(1); // looking again never submits again
    expect(costUsd(result.model, result.usage, { batched: true })).toBeCloseTo(
      costUsd(result.model, result.usage) / 2,
      6,
    );
  });

  it('turns an errored request into an LlmError the turn can record', async () => {
    fake.enqueue(apiError(529, 'overloaded'));
    const { providerBatchId } = (await viaBatch()) as Extract<ChatOutcome, { kind: 'submitted' }>;
    fake.endBatches();
    const e = await viaBatch(providerBatchId).catch((error: unknown) => error);
    expect(e).toBeInstanceOf(LlmError);
    expect(e).toMatchObject({ code: 'llm_overloaded', retryable: true });
  });

  it('keeps a custom_id the API accepts, whatever the step key', () => {
    expect(batchCustomId('a/b c/1')).toBe('a_b_c_1');
    expect(batchCustomId('x'.repeat(80))).toHaveLength(64);
  });
});
