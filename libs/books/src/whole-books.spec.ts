import { WholeBookPassage } from '@parley/agent';
import { overlapLength, withoutOverlap } from './whole-books';

const p = (text: string, chapterIndex = 1): WholeBookPassage => ({
  chunkId: text.slice(0, 8),
  chapter: `Chapter ${chapterIndex}`,
  chapterIndex,
  section: null,
  page: null,
  text,
});

describe('withoutOverlap', () => {
  it('cuts the sentences a passage repeats from the one before it, so the book reads once', () => {
    const a = 'The first sentence is here. The second sentence carries over.';
    const b = 'The second sentence carries over. Then something new happens.';
    expect(withoutOverlap([p(a), p(b)]).map((x) => x.text)).toEqual([a, 'Then something new happens.']);
  });

  it('keeps passages of another chapter whole, and drops one that only repeats', () => {
    const a = 'The first sentence is here. The second sentence carries over.';
    const same = 'The second sentence carries over.';
    expect(withoutOverlap([p(a), p(same)]).map((x) => x.text)).toEqual([a]);
    expect(withoutOverlap([p(a), p(same, 2)]).map((x) => x.text)).toEqual([a, same]);
  });

  it('takes no repeat longer than the chunker overlaps for an overlap: a book may repeat itself', () => {
    const refrain = 'Row, row, row your boat, gently down the stream. '.repeat(12);
    expect(overlapLength(refrain, refrain + 'Merrily.')).toBeLessThanOrEqual(450);
  });

  it('takes no chance match shorter than 20 characters for an overlap', () => {
    expect(overlapLength('ends with the cat.', 'the cat. sat down')).toBe(0);
  });
});
