import { TurnRecord } from '@parley/agent';

/** Turns as a plain transcript (question, and the answer where there is one), for a helper call's prompt. */
export const transcriptOf = (turns: TurnRecord[]): string =>
  turns
    .flatMap((t) => [
      `Reader: ${t.content}`,
      ...(t.ending?.type === 'AssistantReplied' ? [`You: ${t.ending.content}`] : []),
    ])
    .join('\n');
