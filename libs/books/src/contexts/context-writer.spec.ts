import { priceTableWith } from '@parley/agent';
import { ConfigError, loadContextualConfig } from '@parley/config';
import { AnthropicContextWriter } from './anthropic-context-writer';
import { contextProviderOf, contextWriterFor } from './context-writer';
import { OpenAiContextWriter } from './openai-context-writer';

const config = (env: NodeJS.ProcessEnv) => loadContextualConfig({ CONTEXTUAL_RETRIEVAL: 'true', ...env })!;
const table = priceTableWith({
  'ctx-mini': { provider: 'openai', input: 2, output: 8, cachedInput: 0.5 },
  'llama3.1:*': { provider: 'openai', input: 0, output: 0 },
});
const refusal = (env: NodeJS.ProcessEnv) => {
  try {
    contextProviderOf(config(env), table);
  } catch (e) {
    expect(e).toBeInstanceOf(ConfigError);
    return (e as Error).message;
  }
  throw new Error('no ConfigError');
};

describe('contextual retrieval: the provider of CONTEXTUAL_MODEL and its credentials', () => {
  it('off: no settings and nothing checked', () => {
    expect(loadContextualConfig({})).toBeNull();
    expect(loadContextualConfig({ CONTEXTUAL_RETRIEVAL: 'false', LLM_PROVIDER: 'openai' })).toBeNull();
  });

  it('an anthropic model (the default) needs ANTHROPIC_API_KEY, and uses ANTHROPIC_BASE_URL', () => {
    expect(refusal({})).toMatch(
      /ANTHROPIC_API_KEY: required with CONTEXTUAL_RETRIEVAL=true and CONTEXTUAL_MODEL claude-haiku-4-5, an anthropic model/,
    );
    // an OpenAI key does not stand in for it
    expect(refusal({ OPENAI_API_KEY: 'sk-o' })).toMatch(/^Invalid environment:\n {2}ANTHROPIC_API_KEY: required/);
    const c = config({ ANTHROPIC_API_KEY: 'sk-a', ANTHROPIC_BASE_URL: 'http://127.0.0.1:9' });
    expect(c.anthropic).toEqual({ apiKey: 'sk-a', baseUrl: 'http://127.0.0.1:9' });
    expect(contextProviderOf(c, table)).toBe('anthropic');
    expect(contextWriterFor(c, table)).toBeInstanceOf(AnthropicContextWriter);
  });

  it('an openai model of the table (shipped or LLM_PRICES) needs OPENAI_API_KEY, or OPENAI_BASE_URL for a self-hosted server', () => {
    for (const model of ['gpt-4.1-mini', 'ctx-mini', 'llama3.1:8b'])
      expect(refusal({ CONTEXTUAL_MODEL: model, ANTHROPIC_API_KEY: 'sk-a' })).toMatch(
        new RegExp(
          `OPENAI_API_KEY: required with CONTEXTUAL_RETRIEVAL=true and CONTEXTUAL_MODEL ${model}, an openai model .* unless OPENAI_BASE_URL names a self-hosted server`,
        ),
      );
    const keyed = config({ CONTEXTUAL_MODEL: 'ctx-mini', OPENAI_API_KEY: 'sk-o' });
    expect(contextWriterFor(keyed, table)).toBeInstanceOf(OpenAiContextWriter);
    const local = config({ CONTEXTUAL_MODEL: 'llama3.1:8b', OPENAI_BASE_URL: 'http://127.0.0.1:11434/v1' });
    expect(local.openai).toEqual({ apiKey: undefined, baseUrl: 'http://127.0.0.1:11434/v1' });
    expect(contextProviderOf(local, table)).toBe('openai');
  });

  it('a model the table does not name is taken for Anthropic’s, and the message says how to name its provider', () => {
    expect(refusal({ CONTEXTUAL_MODEL: 'my-model', OPENAI_API_KEY: 'sk-o' })).toMatch(
      /ANTHROPIC_API_KEY: required with CONTEXTUAL_RETRIEVAL=true: CONTEXTUAL_MODEL my-model is not in the price table, so it is taken for an anthropic model \(LLM_PRICES names its provider\)/,
    );
    expect(contextProviderOf(config({ CONTEXTUAL_MODEL: 'my-model', ANTHROPIC_API_KEY: 'k' }), table)).toBe(
      'anthropic',
    );
  });

  it('the scripted stand-in writes no contexts', () => {
    expect(refusal({ CONTEXTUAL_MODEL: 'scripted', ANTHROPIC_API_KEY: 'k' })).toMatch(
      /CONTEXTUAL_MODEL: model scripted runs on scripted, which cannot write contexts/,
    );
  });
});
