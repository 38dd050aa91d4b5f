import { ConversationPolicy, RetrievalMode } from '@parley/conversation';

export type { RetrievalMode };

/** What a turn runs by. */
export interface TurnSettings {
  /** undefined: the client's configured model */
  model: string | undefined;
  maxIterations: number;
  retrievalMode: RetrievalMode;
  budgetTokens: number;
  instructions: string | undefined;
}

/** The parts of the server's configuration a turn's settings fall back on. */
export interface TurnDefaults {
  agent: { maxIterations: number; contextTokens: number };
  llm: { retrievalMode: RetrievalMode };
}

/** The conversation's policy when the turn was posted, the server's configuration for the rest. */
export function turnSettings(policy: ConversationPolicy | undefined, config: TurnDefaults): TurnSettings {
  const serverMax = config.agent.maxIterations;
  return {
    model: policy?.model,
    // a policy may ask for fewer calls, never for more than the server allows
    maxIterations: Math.min(policy?.maxIterations ?? serverMax, serverMax),
    retrievalMode: policy?.retrievalMode ?? config.llm.retrievalMode,
    budgetTokens: policy?.contextBudgetTokens ?? config.agent.contextTokens,
    instructions: policy?.instructions,
  };
}
