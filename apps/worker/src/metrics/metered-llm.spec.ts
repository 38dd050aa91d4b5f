import { Registry } from 'prom-client';
import { ChatOutcome, ChatResult, LlmClient, LlmError, withStoppedAttempts } from '@parley/agent';
import { MeteredLlm } from './metered-llm';
import { WorkerMetrics } from './worker-metrics';

const usage = (n: number) => ({
  inputTokens: n,
  outputTokens: 1,
  cacheReadInputTokens: 0,
  cacheCreationInputTokens: 0,
});
const answer = (extra: Partial<ChatResult> = {}): ChatOutcome => ({
  kind: 'answered',
  result: {
    content: [{ type: 'text', text: 'hi' }],
    stopReason: 'end_turn',
    usage: usage(10),
    model: 'claude-x-20250101',
    ...extra,
  },
});

/** A client of two providers: models named `gpt-…` run on openai, any other on anthropic. */
function llmThat(outcome: () => Promise<ChatOutcome>): LlmClient {
  return {
    everyModelTakesTools: true,
    capabilitiesOf: (model) =>
      model?.startsWith('gpt-')
        ? { provider: 'openai', tools: true, documents: false, batches: false }
        : { provider: 'anthropic', tools: true, documents: 'cached', batches: true },
    chatWithTools: outcome,
  };
}

/** A clock that moves 250 ms between reads. */
const ticking = () => {
  let t = 0;
  return () => (t += 250);
};

async function lines(registry: Registry, prefix: string): Promise<string[]> {
  return (await registry.metrics()).split('\n').filter((l) => l.startsWith(prefix));
}

describe(MeteredLlm.name, () => {
  const call = (llm: LlmClient, model?: string) => {
    const metrics = new WorkerMetrics(new Registry());
    const sut = new MeteredLlm(llm, 'claude-default', metrics, ticking());
    return { metrics, result: sut.chatWithTools([], [], { system: '', model }) };
  };

  it("keeps the client it wraps as it was: each model's capabilities", () => {
    const sut = new MeteredLlm(
      llmThat(async () => answer()),
      'm',
      new WorkerMetrics(new Registry()),
    );
    expect(sut.capabilitiesOf('gpt-5.4')).toEqual({
      provider: 'openai',
      tools: true,
      documents: false,
      batches: false,
    });
    expect(sut.capabilitiesOf(undefined)).toMatchObject({ provider: 'anthropic', batches: true });
    expect(sut.everyModelTakesTools).toBe(true);
  });

  it("labels a call with its model's provider", async () => {
    const { metrics, result } = call(
      llmThat(async () => answer()),
      'gpt-5.4',
    );
    await result;
    expect(await lines(metrics.registry, 'gen_ai_client_operation_duration_seconds_sum')).toEqual([
      expect.stringMatching(/gen_ai_provider_name="openai".*gen_ai_request_model="gpt-5.4"} 0.25$/),
    ]);
  });

  it('times a call by the model asked for, and counts the tokens billed, stopped attempts included', async () => {
    const stopped = { messageId: 'msg_1', model: 'm', usage: usage(5), cause: 'broken' as const };
    const { metrics, result } = call(
      llmThat(async () => answer({ stoppedAttempts: [stopped] })),
      'claude-policy',
    );
    await result;
    expect(await lines(metrics.registry, 'gen_ai_client_operation_duration_seconds_sum')).toEqual([
      expect.stringMatching(/gen_ai_request_model="claude-policy"} 0.25$/),
    ]);
    expect(await lines(metrics.registry, 'gen_ai_client_token_usage_sum{')).toEqual([
      expect.stringMatching(/gen_ai_token_type="input"} 15$/),
      expect.stringMatching(/gen_ai_token_type="output"} 2$/),
    ]);
  });

  it('records a failed call with its error_type and what it was billed, and throws it on', async () => {
    const error = withStoppedAttempts(new LlmError('busy', 'overloaded', true), [
      { messageId: 'msg_1', model: 'm', usage: usage(7), cause: 'broken' },
    ]);
    const { metrics, result } = call(llmThat(() => Promise.reject(error)));
    await expect(result).rejects.toBe(error);
    expect(await lines(metrics.registry, 'gen_ai_client_operation_duration_seconds_count')).toEqual([
      expect.stringMatching(/gen_ai_request_model="claude-default",error_type="overloaded"} 1$/),
    ]);
    expect(await lines(metrics.registry, 'gen_ai_client_token_usage_sum{')).toHaveLength(2);
  });

  it('does not count a call submitted to a provider batch or waiting in one, nor time an answer fetched from one', async () => {
    for (const waiting of [
      { kind: 'submitted', providerBatchId: 'msgbatch_1' },
      { kind: 'pending', providerBatchId: 'msgbatch_1', status: 'in_progress' },
    ] as const) {
      const { metrics, result } = call(llmThat(async () => waiting));
      expect(await result).toEqual(waiting);
      expect(await lines(metrics.registry, 'gen_ai_client')).toEqual([]);
    }

    const fetched = call(llmThat(async () => answer({ batched: true })));
    await fetched.result;
    expect(await lines(fetched.metrics.registry, 'gen_ai_client_operation_duration_seconds_count')).toEqual([]);
    expect(await lines(fetched.metrics.registry, 'gen_ai_client_token_usage_count{')).toHaveLength(2);
  });
});
