import { matchHeading, romanToInt, wordsToInt } from './headings';

describe('headings', () => {
  it.each([
    ['I', 1],
    ['iv', 4],
    ['XII', 12],
    ['XLIX', 49],
    ['MCMXC', 1990],
    ['IIII', null],
    ['VX', null],
    ['CIVIL', null],
    ['', null],
  ])('romanToInt(%p) = %p', (s, n) => expect(romanToInt(s)).toBe(n));

  it.each([
    ['one', 1],
    ['Twelve', 12],
    ['twenty-one', 21],
    ['THIRTY FIRST', 31],
    ['the first', 1],
    ['ninetieth', 90],
    ['zero', null],
    ['twelve-one', null],
    ['fish', null],
  ])('wordsToInt(%p) = %p', (s, n) => expect(wordsToInt(s)).toBe(n));

  it.each([
    ['CHAPTER I. Down the Rabbit-Hole', 'chapter', 'chapter:1', 'Down the Rabbit-Hole'],
    ['Chapter 61', 'chapter', 'chapter:61', ''],
    ['Letter 4', 'chapter', 'letter:4', ''],
    ['CHAPTER XXI: A Night', 'chapter', 'chapter:21', 'A Night'],
    ['Chapter Eleven \u2014 Home', 'chapter', 'chapter:11', 'Home'],
    ['VOLUME II', 'part', 'part:2', ''],
    ['PREFACE', 'named', 'named:preface', ''],
    ['IV. THE RED-HEADED LEAGUE', 'numeral', 'numeral:4', 'THE RED-HEADED LEAGUE'],
  ])('recognises %p', (line, kind, key, title) => {
    expect(matchHeading(line)).toEqual(expect.objectContaining({ kind, key, inlineTitle: title, label: line }));
  });

  it.each([
    'chapter 1',
    'Chapter 3 was the longest, she said,',
    'Chapter',
    'CHAPTER ZZ',
    'I',
    'I went home.',
    'Letters from home',
    'It was the best of times',
  ])('does not take %p for a heading', (line) => {
    expect(matchHeading(line)).toBeNull();
  });
});
