import { Usage } from '@parley/conversation';

/** The provider-neutral LLM port. Adapters: Anthropic (official SDK) and the offline scripted one. */
export type LlmTextBlock = { type: 'text'; text: string };
export type LlmToolUseBlock = { type: 'tool_use'; id: string; name: string; input: unknown };
export type LlmToolResultBlock = { type: 'tool_result'; toolUseId: string; content: string; isError: boolean };

export type LlmMessage =
  | { role: 'user'; content: Array<LlmTextBlock | LlmToolResultBlock> }
  | { role: 'assistant'; content: Array<LlmTextBlock | LlmToolUseBlock> };

export interface LlmToolSpec {
  name: string;
  description: string;
  inputSchema: { type: 'object'; properties: Record<string, unknown>; required?: string[] };
}

export interface ChatOptions {
  system: string;
  /** index of the last message of the stable prefix (earlier turns), for a cache breakpoint */
  prefixEnd?: number;
  /** 'none' keeps the tools (and their cache) but forbids calling them: the forced final answer */
  toolChoice?: 'auto' | 'none';
  maxTokens?: number;
  signal?: AbortSignal;
  /** attempt: 1, then 2, … when a stream broken off midway (overloaded) is requested again */
  onTextDelta?: (text: string, attempt?: number) => void;
}

export interface ChatResult {
  content: Array<LlmTextBlock | LlmToolUseBlock>;
  stopReason: string;
  usage: Usage;
  model: string;
}

export interface LlmClient {
  readonly provider: string;
  /** false for providers without tool use: the agent then always retrieves first */
  readonly supportsTools: boolean;
  chatWithTools(messages: LlmMessage[], tools: LlmToolSpec[], options: ChatOptions): Promise<ChatResult>;
}

/** An LLM failure, classified so the turn can say whether trying again may help. */
export class LlmError extends Error {
  constructor(
    message: string,
    readonly code: string,
    readonly retryable: boolean,
    /** the stream broke off after a 200 (the SDK does not retry those) */
    readonly midStream = false,
  ) {
    super(message);
    this.name = 'LlmError';
  }
}

export const LLM_CLIENT = 'LLM_CLIENT';

export const zeroUsage = (): Usage => ({
  inputTokens: 0,
  outputTokens: 0,
  cacheReadInputTokens: 0,
  cacheCreationInputTokens: 0,
});
export const addUsage = (a: Usage, b: Usage): Usage => ({
  inputTokens: a.inputTokens + b.inputTokens,
  outputTokens: a.outputTokens + b.outputTokens,
  cacheReadInputTokens: a.cacheReadInputTokens + b.cacheReadInputTokens,
  cacheCreationInputTokens: a.cacheCreationInputTokens + b.cacheCreationInputTokens,
});
