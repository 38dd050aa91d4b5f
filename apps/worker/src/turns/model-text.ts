import { ChatResult, TurnRecord } from '@parley/agent';

/** The text blocks the model wrote, in order. */
export const textsOf = (r: ChatResult): string[] => r.content.flatMap((b) => (b.type === 'text' ? [b.text] : []));

/** Turns as a plain transcript (question, and the answer where there is one), for a helper call's prompt. */
export const transcriptOf = (turns: TurnRecord[]): string =>
  turns
    .flatMap((t) => [
      `Reader: ${t.content}`,
      ...(t.ending?.type === 'AssistantReplied' ? [`You: ${t.ending.content}`] : []),
    ])
    .join('\n');
