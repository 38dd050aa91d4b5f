import { FakeOpenAi } from '../../../../test/support/fake-openai/fake-openai.server';
import { createTestDatabase, TestDatabase } from '../../../../test/support/test-database';
import { AnthropicLlm } from './anthropic.llm';
import { ChatOptions, ChatOutcome, LlmClient, LlmError, LlmMessage, LlmToolSpec } from './llm.types';
import { ModelToolSupport } from './model-tool-support';
import { OpenAiLlm, TOOLS_UNSUPPORTED } from './openai.llm';
import { priceTableWith } from './pricing';
import { ProviderRouter } from './provider-router';
import { WrappedLlm } from './wrapped-llm';

/** A wrapper adding nothing: what WrappedLlm forwards. */
class PassingLlm extends WrappedLlm {
  chatWithTools(messages: LlmMessage[], tools: LlmToolSpec[], options: ChatOptions): Promise<ChatOutcome> {
    return this.inner.chatWithTools(messages, tools, options);
  }
}

/** capabilitiesOf per model: the router asks the model's provider, a wrapper the client it wraps. */
describe(`${ProviderRouter.name}.capabilitiesOf`, () => {
  let db: TestDatabase;
  let fake: FakeOpenAi;
  beforeAll(async () => {
    [db, fake] = await Promise.all([createTestDatabase(), FakeOpenAi.start({ modelsWithoutTools: ['gemma-small'] })]);
  });
  afterAll(async () => {
    await fake.close();
    await db.drop();
  });

  const table = priceTableWith({
    'llama3.1:*': { provider: 'openai', input: 0, output: 0 },
    'gemma-small': { provider: 'openai', input: 0, output: 0 },
    'tiny-no-tools': { provider: 'openai', input: 0, output: 0, tools: false },
  });
  const openai = () => new OpenAiLlm({ model: 'llama3.1:8b', maxTokens: 64, maxRetries: 0, baseUrl: fake.url });
  const anthropic = () => new AnthropicLlm({ model: 'claude-sonnet-5-5', maxTokens: 64, maxRetries: 0, apiKey: 'k' });
  const router = (clients: Record<string, LlmClient>, provider = 'openai', model = 'llama3.1:8b') =>
    new ProviderRouter(
      new Map(Object.entries(clients)),
      { provider, model },
      table,
      new ModelToolSupport(db.pool, table),
    );

  it("answers for each model as its provider serves it, the configured model's for none", () => {
    const sut = router({ openai: openai(), anthropic: anthropic() });
    expect(sut.capabilitiesOf('claude-sonnet-5-5')).toEqual({
      provider: 'anthropic',
      tools: true,
      documents: 'cached',
      batches: true,
    });
    expect(sut.capabilitiesOf('llama3.1:70b')).toEqual({
      provider: 'openai',
      tools: true,
      documents: false,
      batches: false,
    });
    expect(sut.capabilitiesOf(undefined)).toEqual(sut.capabilitiesOf('llama3.1:8b'));
    // a model the table does not name runs on the default provider
    expect(sut.capabilitiesOf('unpriced-model').provider).toBe('openai');
    expect(router({ anthropic: anthropic() }, 'anthropic', 'claude-sonnet-5-5').capabilitiesOf('x').provider).toBe(
      'anthropic',
    );
  });

  it('says a model whose provider this server does not talk to can do nothing (its calls fail)', () => {
    expect(router({ openai: openai() }).capabilitiesOf('claude-sonnet-5-5')).toEqual({
      provider: 'anthropic',
      tools: false,
      documents: false,
      batches: false,
    });
  });

  it('takes tool use away from a model the table marks without tools, and from one that refused them', async () => {
    const sut = router({ openai: openai() });
    expect(sut.capabilitiesOf('tiny-no-tools').tools).toBe(false);
    expect(sut.capabilitiesOf('gemma-small').tools).toBe(true);
    const tool: LlmToolSpec = {
      name: 'search_book',
      description: 's',
      inputSchema: { type: 'object', properties: {} },
    };
    const refused = await sut
      .chatWithTools([{ role: 'user', content: [{ type: 'text', text: 'q' }] }], [tool], {
        system: 'sys',
        model: 'gemma-small',
      })
      .catch((e: unknown) => e);
    expect(refused).toBeInstanceOf(LlmError);
    expect(refused).toMatchObject({ code: TOOLS_UNSUPPORTED });
    expect(sut.capabilitiesOf('gemma-small')).toMatchObject({ provider: 'openai', tools: false });
    // another worker knows it from the refusal recorded, once it has read them
    const support = new ModelToolSupport(db.pool, table);
    await support.load();
    const other = new ProviderRouter(
      new Map([['openai', openai()]]),
      { provider: 'openai', model: 'x' },
      table,
      support,
    );
    expect(other.capabilitiesOf('gemma-small').tools).toBe(false);
    expect(other.capabilitiesOf('llama3.1:8b').tools).toBe(true);
  });

  it('says every model takes tools only where every provider is sure of it (a Chat Completions server may refuse)', () => {
    expect(router({ anthropic: anthropic() }, 'anthropic', 'claude-sonnet-5-5').everyModelTakesTools).toBe(true);
    expect(router({ anthropic: anthropic(), openai: openai() }).everyModelTakesTools).toBe(false);
  });

  it('is forwarded per model by a wrapper, as the wrapped client answers', () => {
    const sut = router({ openai: openai(), anthropic: anthropic() });
    const wrapped = new PassingLlm(new PassingLlm(sut));
    for (const model of ['claude-sonnet-5-5', 'llama3.1:8b', 'tiny-no-tools', undefined])
      expect(wrapped.capabilitiesOf(model)).toEqual(sut.capabilitiesOf(model));
    expect(wrapped.capabilitiesOf('claude-sonnet-5-5').provider).toBe('anthropic');
    expect(wrapped.capabilitiesOf('tiny-no-tools').tools).toBe(false);
    expect(wrapped.everyModelTakesTools).toBe(false);
  });
});
