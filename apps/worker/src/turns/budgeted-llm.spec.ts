import {
  CallRequest,
  ChatOptions,
  ChatOutcome,
  LlmClient,
  LlmError,
  ModelCapabilities,
  priceTableWith,
  withStoppedAttempts,
  worstCaseUsd,
} from '@parley/agent';
import { BudgetedLlm } from './budgeted-llm';
import { CallPayer, TurnBudget } from './turn-budget';

const prices = priceTableWith();
const payer: CallPayer = { ownerId: 'ann', limitUsd: 1, turnId: 't1', atVersion: 4 };
const answered: ChatOutcome = {
  kind: 'answered',
  result: {
    content: [{ type: 'text', text: 'Marisol keeps the light.' }],
    stopReason: 'end_turn',
    usage: { inputTokens: 10, outputTokens: 5, cacheReadInputTokens: 0, cacheCreationInputTokens: 0 },
    model: 'claude-sonnet-4-5',
  },
};

/** The budget as the decorator uses it: what it was asked to reserve, what it gave back; `refuse` throws as a spent budget does. */
class RecordingBudget {
  reserved: Array<{ payer: CallPayer; usd: number; viaBatch: boolean }> = [];
  released: string[] = [];
  refuse = false;
  async reserve(p: CallPayer, request: CallRequest, { viaBatch = false } = {}) {
    if (this.refuse) throw new LlmError('over', 'budget_exceeded', false);
    this.reserved.push({ payer: p, usd: worstCaseUsd(request, prices), viaBatch });
    return `r${this.reserved.length}`;
  }
  async release(id: string) {
    this.released.push(id);
  }
}

/** A provider that counts its calls and answers, or fails as told. */
class CountingLlm implements LlmClient {
  readonly everyModelTakesTools = true;
  capabilitiesOf(): ModelCapabilities {
    return { provider: 'anthropic', tools: true, documents: 'cached', batches: true };
  }
  calls = 0;
  failWith?: Error;
  async chatWithTools(): Promise<ChatOutcome> {
    this.calls++;
    if (this.failWith) throw this.failWith;
    return answered;
  }
}

describe(BudgetedLlm.name, () => {
  const ask = [{ role: 'user' as const, content: [{ type: 'text' as const, text: 'Who is Marisol?' }] }];
  const options: ChatOptions = { system: 'You answer questions about books.', model: 'claude-sonnet-4-5' };
  let inner: CountingLlm;
  let budget: RecordingBudget;
  let sut: BudgetedLlm;
  beforeEach(() => {
    inner = new CountingLlm();
    budget = new RecordingBudget();
    sut = new BudgetedLlm(inner, budget as unknown as TurnBudget, { model: 'claude-sonnet-4-5', maxTokens: 1024 });
  });

  it("reserves the request's worst case (the default max_tokens when the call names none) before the call", async () => {
    await BudgetedLlm.paying(payer, () => sut.chatWithTools(ask, [], options));
    const expected = worstCaseUsd(
      { model: 'claude-sonnet-4-5', messages: ask, tools: [], options, maxTokens: 1024 },
      prices,
    );
    expect(budget.reserved).toEqual([{ payer, usd: expected, viaBatch: false }]);
    expect(inner.calls).toBe(1);
  });

  it('makes no call the budget refuses', async () => {
    budget.refuse = true;
    await expect(BudgetedLlm.paying(payer, () => sut.chatWithTools(ask, [], options))).rejects.toMatchObject({
      code: 'budget_exceeded',
    });
    expect(inner.calls).toBe(0);
  });

  it('reserves nothing without a payer (no budget), nor to collect an answer a provider batch holds', async () => {
    await sut.chatWithTools(ask, [], options);
    await BudgetedLlm.paying(payer, () =>
      sut.chatWithTools(ask, [], { ...options, viaBatch: { callId: 'c', providerBatchId: 'msgbatch_1' } }),
    );
    expect(budget.reserved).toEqual([]);
    expect(inner.calls).toBe(2);
    // a submission is a purchase: reserved for as long as a batch may take
    await BudgetedLlm.paying(payer, () => sut.chatWithTools(ask, [], { ...options, viaBatch: { callId: 'c' } }));
    expect(budget.reserved).toMatchObject([{ viaBatch: true }]);
  });

  it('gives the reservation back when the call failed unbilled, and keeps it for a call billed in part', async () => {
    inner.failWith = new LlmError('overloaded', 'overloaded', true);
    await expect(BudgetedLlm.paying(payer, () => sut.chatWithTools(ask, [], options))).rejects.toThrow('overloaded');
    expect(budget.released).toEqual(['r1']);
    const attempt = {
      messageId: 'msg_1',
      model: 'claude-sonnet-4-5',
      usage: answered.result.usage,
      cause: 'broken' as const,
    };
    inner.failWith = withStoppedAttempts(new LlmError('broken', 'stream_broken', true), [attempt]);
    await expect(BudgetedLlm.paying(payer, () => sut.chatWithTools(ask, [], options))).rejects.toThrow('broken');
    expect(budget.released).toEqual(['r1']); // its ModelCallStopped settles r2
  });
});
