import { HeadingMatch } from './headings';

/**
 * Chapter indexes that follow the book's own numbering, because a reader's "I've read up to
 * chapter 6" means the chapter headed 6, not the sixth section the parser found:
 * - chapters of the book's numbering (its most common numbered kind: Chapter, Letter, bare
 *   numerals, or parts when nothing else is numbered) keep their number, or their rank when
 *   the numbers do not keep rising (numbering that restarts in each part);
 * - whatever comes before the first of them (front matter, a preface, prefatory letters) is 0;
 * - an unnumbered section after them (an interlude, an epilogue) goes with the next chapter:
 *   one past the last numbered one.
 * A book without numbered chapters counts its sections 1..N, and its front matter 0.
 *
 * `headings` has one entry per chapter in book order: its heading as matched (null when the
 * heading is not a numbered one), or 'front-matter' for the text before the first heading.
 */
export function chapterIndexes(headings: Array<HeadingMatch | null | 'front-matter'>): number[] {
  const numbering = mainNumbering(headings);
  if (!numbering) {
    let n = 0;
    return headings.map((h) => (h === 'front-matter' ? 0 : ++n));
  }
  const numbered = headings.map((h) => (h !== 'front-matter' && h && familyOf(h) === numbering ? h : null));
  const numbers = numbered.filter((h) => h !== null).map((h) => h.number!);
  const rising = numbers.every((n, i) => i === 0 || n > numbers[i - 1]);
  let last = 0;
  let rank = 0;
  let seen = false;
  return numbered.map((h) => {
    if (h) {
      seen = true;
      last = rising ? h.number! : ++rank;
      return last;
    }
    return seen ? last + 1 : 0;
  });
}

/** "chapter" of "chapter:6", "letter" of "letter:4", "numeral" of "numeral:2"… */
const familyOf = (h: HeadingMatch) => h.key.slice(0, h.key.indexOf(':'));

/** The most common kind of numbered heading, if any. */
function mainNumbering(headings: Array<HeadingMatch | null | 'front-matter'>): string | null {
  const counts = new Map<string, number>();
  for (const h of headings)
    if (h && h !== 'front-matter' && h.number !== null) counts.set(familyOf(h), (counts.get(familyOf(h)) ?? 0) + 1);
  let best: string | null = null;
  for (const [family, n] of counts) if (best === null || n > counts.get(best)!) best = family;
  return best;
}
