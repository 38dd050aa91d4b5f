import { wordForms } from './word-forms';

describe(wordForms.name, () => {
  it('gives the other forms of irregular verbs, whichever form the question uses', () => {
    expect(wordForms('What did the Cat say?')).toEqual([['say', 'said']]);
    expect(wordForms('Whom had she TOLD, and what was written?')).toEqual([
      ['told', 'tell'],
      ['written', 'write'],
      ['written', 'wrote'],
    ]);
  });

  it('leaves regular words, and forms that are often other words, alone', () => {
    expect(wordForms('Why were the gardeners painting the roses? She walked off.')).toEqual([]);
    expect(wordForms('a bit of ground')).toEqual([]);
  });
});
