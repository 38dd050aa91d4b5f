import { renderPrompt } from '@parley/agent';

/** The answering calls' system prompt: the book, how far the reader has read, the reader's instructions. */
export function systemPrompt(book: string, readingPosition: number | null, instructions: string | undefined): string {
  const scope =
    readingPosition === null
      ? 'The reader may discuss the whole book.'
      : `The reader has read up to and including chapter ${readingPosition}. Search only finds passages up to there.`;
  const prompt = renderPrompt('conversation_system_prompt', { book, reading_scope: scope });
  return instructions
    ? `${prompt}\n\nThe reader's instructions for this conversation:\n<instructions>\n${instructions}\n</instructions>`
    : prompt;
}
