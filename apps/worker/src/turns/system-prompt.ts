import { renderPrompt } from '@parley/agent';

/**
 * The answering calls' system prompt in two parts. `system`: what is the same for every reader of
 * the book (how to answer, the book's name), first, so that readers of one book (a catalogue's)
 * share its cached prefix whatever their position; `systemTail`: what is the reader's (how far
 * they have read, their instructions for this conversation), after it.
 */
export function systemPrompt(
  book: string,
  readingPosition: number | null,
  instructions: string | undefined,
): { system: string; systemTail: string } {
  const scope =
    readingPosition === null
      ? 'The reader may discuss the whole book.'
      : `The reader has read up to and including chapter ${readingPosition}. Search only finds passages up to there.`;
  const tail = instructions
    ? `${scope}\n\nThe reader's instructions for this conversation:\n<instructions>\n${instructions}\n</instructions>`
    : scope;
  return { system: renderPrompt('conversation_system_prompt', { book }), systemTail: tail };
}
