import { systemPrompt } from './system-prompt';

describe('systemPrompt', () => {
  it("puts the book's part first, the same for every reader of it, and the reader's after", () => {
    const first = systemPrompt('"The Harbour Atlas"', 1, undefined);
    const second = systemPrompt('"The Harbour Atlas"', 7, 'Answer like a sailor.');
    expect(second.system).toBe(first.system);
    expect(first.system).toContain('"The Harbour Atlas"');
    expect(first.system).not.toMatch(/chapter 1|chapter 7/);
    expect(first.systemTail).toBe(
      'The reader has read up to and including chapter 1. Search only finds passages up to there.',
    );
    expect(second.systemTail).toContain('chapter 7');
    expect(second.systemTail).toContain('<instructions>\nAnswer like a sailor.\n</instructions>');
    expect(systemPrompt('"The Harbour Atlas"', null, undefined).systemTail).toBe(
      'The reader may discuss the whole book.',
    );
  });

  it('differs in its shared part only by the book', () => {
    expect(systemPrompt('"Another"', 1, undefined).system).not.toBe(
      systemPrompt('"The Harbour Atlas"', 1, undefined).system,
    );
  });
});
