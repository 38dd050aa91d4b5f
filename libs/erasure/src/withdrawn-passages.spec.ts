import { Citation } from '@parley/conversation';
import { WITHDRAWN_PASSAGES_NOTICE, withoutWithdrawnPassages } from './withdrawn-passages';

const cite = (chunkId: string, quote?: string): Citation => ({
  chunkId,
  chapter: 'I',
  section: null,
  page: null,
  score: 1,
  ...(quote !== undefined ? { quote } : {}),
});
const withdrawn = new Set(['w1', 'w2']);

describe(withoutWithdrawnPassages.name, () => {
  it('given a tool result that returned a withdrawn passage, then it says they are gone and keeps which they were, without text', () => {
    const data = {
      turnId: 't',
      toolUseId: 'u',
      content: '[1] The chart showed the wreck.',
      isError: false,
      chunks: [cite('w1'), cite('k1')],
      citationStart: 1,
    };
    const redacted = withoutWithdrawnPassages({ type: 'ToolResultRecorded', data }, withdrawn)!;
    expect(redacted.data).toEqual({ ...data, content: WITHDRAWN_PASSAGES_NOTICE });
    expect(redacted.content).toBe(WITHDRAWN_PASSAGES_NOTICE);
    expect(redacted.citations).toEqual([cite('w1'), cite('k1')]);
  });

  it('given an answer that quoted a withdrawn passage, then its quote goes and its own words and other quotes stay', () => {
    const data = {
      turnId: 't',
      messageId: 'm',
      content: 'The chart showed a wreck [1][2].',
      citations: [cite('w2', 'the wreck of the Silver Gannet'), cite('k1', 'seven moorings')],
    } as never;
    const redacted = withoutWithdrawnPassages({ type: 'AssistantReplied', data }, withdrawn)!;
    expect(redacted.citations).toEqual([cite('w2'), cite('k1', 'seven moorings')]);
    expect(redacted.content).toBe('The chart showed a wreck [1][2].');
  });

  it('leaves alone what holds no text of the withdrawn passages (nothing to redact)', () => {
    const result = { turnId: 't', toolUseId: 'u', content: 'other', isError: false, chunks: [cite('k1')] };
    expect(withoutWithdrawnPassages({ type: 'ToolResultRecorded', data: result }, withdrawn)).toBeUndefined();
    const answer = { turnId: 't', messageId: 'm', content: 'x', citations: [cite('w1')] };
    expect(withoutWithdrawnPassages({ type: 'AssistantReplied', data: answer }, withdrawn)).toBeUndefined();
  });
});
