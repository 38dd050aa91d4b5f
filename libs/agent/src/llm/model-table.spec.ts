import { loadConfig } from '@parley/config';
import { modelAllowedToReaders, modelRefusal, modelTableOf } from './model-table';

const env = (more: Record<string, string>) => loadConfig({ NODE_ENV: 'development', ...more });
const openai = { LLM_PROVIDER: 'openai', OPENAI_API_KEY: 'sk-x' };

describe(modelTableOf.name, () => {
  it('refuses to start when LLM_MODEL has no price', () => {
    expect(() => modelTableOf(env({ ...openai, LLM_MODEL: 'acme-chat-1' }))).toThrow(
      /LLM_MODEL: unknown model acme-chat-1/,
    );
  });

  it('refuses to start when LLM_MODEL runs on a provider the server does not talk to', () => {
    expect(() => modelTableOf(env({ ...openai, LLM_MODEL: 'claude-sonnet-5-5' }))).toThrow(
      /LLM_MODEL: model claude-sonnet-5-5 runs on anthropic/,
    );
    expect(() => modelTableOf(env({ ...openai, LLM_MODEL: 'gpt-5.4', LLM_SUMMARY_MODEL: 'claude-haiku-4-5' }))).toThrow(
      /LLM_SUMMARY_MODEL/,
    );
  });

  it('starts with a model LLM_PRICES names, and with two providers for models of both', () => {
    const prices = JSON.stringify({ 'acme-chat-1': { provider: 'openai', input: 2, output: 8 } });
    const config = env({
      ...openai,
      ANTHROPIC_API_KEY: 'k',
      LLM_PROVIDERS: 'openai,anthropic',
      LLM_MODEL: 'acme-chat-1',
      LLM_SUMMARY_MODEL: 'claude-haiku-4-5',
      LLM_PRICES: prices,
    });
    const table = modelTableOf(config);
    expect(table.providerOf('acme-chat-1')).toBe('openai');
    expect(modelRefusal('claude-opus-5', config.llm, table)).toBeUndefined();
    expect(modelRefusal('gpt-7', config.llm, table)).toMatch(/unknown model gpt-7/);
  });

  it('lets readers pick LLM_MODEL alone unless POLICY_MODELS lists more, and stops boot on a listed model it cannot run', () => {
    const anthropic = { ANTHROPIC_API_KEY: 'k', LLM_MODEL: 'claude-haiku-4-5' };
    const only = env(anthropic).llm;
    expect(only.policyModels).toEqual(['claude-haiku-4-5']);
    expect(modelAllowedToReaders('claude-haiku-4-5', only)).toBe(true);
    expect(modelAllowedToReaders('claude-opus-5', only)).toBe(false);
    const listed = env({ ...anthropic, POLICY_MODELS: ' claude-sonnet-5-5 , claude-sonnet-5-5,claude-opus-5' }).llm;
    expect(listed.policyModels).toEqual(['claude-sonnet-5-5', 'claude-opus-5']);
    expect(modelAllowedToReaders('claude-opus-5', listed)).toBe(true);
    expect(modelAllowedToReaders('claude-opus-5-5', listed)).toBe(false);
    expect(modelAllowedToReaders('claude-opus-5-5', env({ ...anthropic, POLICY_MODELS: '*' }).llm)).toBe(true);
    expect(() => modelTableOf(env({ ...anthropic, POLICY_MODELS: 'claude-haiku-4-5,gpt-5.4' }))).toThrow(
      /POLICY_MODELS: model gpt-5.4 runs on openai/,
    );
    expect(() => env({ ...anthropic, POLICY_MODELS: 'a b' })).toThrow(/POLICY_MODELS/);
    expect(() => env({ ...anthropic, POLICY_MODELS: 'claude-*' })).toThrow(/POLICY_MODELS/);
  });

  it('checks nothing with the scripted stand-in, which answers for any priced model', () => {
    const config = env({ LLM_MODEL: 'not-priced' });
    expect(modelRefusal('claude-haiku-4-5', config.llm, modelTableOf(config))).toBeUndefined();
  });
});
