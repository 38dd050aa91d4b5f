import { turnSettings, TurnDefaults } from './turn-settings';

describe(turnSettings.name, () => {
  const config: TurnDefaults = {
    agent: { maxIterations: 6, contextTokens: 50_000 },
    llm: { retrievalMode: 'auto' },
  };

  it('follows the server configuration where the conversation has no policy', () => {
    expect(turnSettings(undefined, config)).toEqual({
      model: undefined,
      maxIterations: 6,
      retrievalMode: 'auto',
      budgetTokens: 50_000,
      instructions: undefined,
    });
    expect(turnSettings({}, config)).toEqual(turnSettings(undefined, config));
  });

  it("takes the conversation's policy where it sets a field", () => {
    const sut = turnSettings(
      {
        model: 'claude-test',
        maxIterations: 2,
        retrievalMode: 'always-retrieve',
        contextBudgetTokens: 8_000,
        instructions: 'Answer in French.',
      },
      config,
    );
    expect(sut).toEqual({
      model: 'claude-test',
      maxIterations: 2,
      retrievalMode: 'always-retrieve',
      budgetTokens: 8_000,
      instructions: 'Answer in French.',
    });
  });

  it('never lets a policy allow more calls than the server does', () => {
    expect(turnSettings({ maxIterations: 50 }, config).maxIterations).toBe(6);
  });
});
