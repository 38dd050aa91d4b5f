import { AssistantReplied, Citation, ToolResultRecorded } from '@parley/conversation';

/** What a tool result that quoted a withdrawn book says instead, to the reader and in later turns' histories. */
export const WITHDRAWN_PASSAGES_NOTICE =
  '[These passages came from a book its publisher has withdrawn: they are no longer available.]';

/** A tool result or an answer as it is kept once a withdrawn book's passages are taken out of it. */
export interface RedactedCitingEvent {
  data: ToolResultRecorded['data'] | AssistantReplied['data'];
  /** the message's content and citations in the read model */
  content: string;
  citations: Citation[];
}

/**
 * A tool result that returned any of the withdrawn passages keeps which passages they were
 * (book, chapter, score: no text) and says they are gone instead of their text; an answer keeps
 * its citations without the text it quoted from them. Undefined when the event holds no text
 * of them (an answer citing them without quotes). The answer's own words are the model's, and stay.
 */
export function withoutWithdrawnPassages(
  event: { type: 'ToolResultRecorded' | 'AssistantReplied'; data: unknown },
  withdrawn: ReadonlySet<string>,
): RedactedCitingEvent | undefined {
  const unquoted = (c: Citation): Citation => {
    if (!withdrawn.has(c.chunkId) || c.quote === undefined) return c;
    const { quote: _quote, ...rest } = c;
    return rest;
  };
  if (event.type === 'ToolResultRecorded') {
    const data = event.data as ToolResultRecorded['data'];
    const chunks = data.chunks ?? [];
    if (!chunks.some((c) => withdrawn.has(c.chunkId))) return undefined;
    const redacted = { ...data, content: WITHDRAWN_PASSAGES_NOTICE, chunks: chunks.map(unquoted) };
    return { data: redacted, content: redacted.content, citations: redacted.chunks };
  }
  const data = event.data as AssistantReplied['data'];
  if (!data.citations.some((c) => withdrawn.has(c.chunkId) && c.quote !== undefined)) return undefined;
  const redacted = { ...data, citations: data.citations.map(unquoted) };
  return { data: redacted, content: redacted.content, citations: redacted.citations };
}
