/**
 * What a part of a book is, in one vocabulary: EPUB 3 `epub:type` values (EPUB Structural
 * Semantics), ARIA `doc-*` roles (DPUB-ARIA, the same words), and EPUB 2 guide types mapped onto
 * them. Only what decides how the part is read matters here: apparatus (dropped), front and back
 * matter (kept, not counted as chapters), body, and notes.
 */

/** Parts that are not the book's text: they are dropped. */
const APPARATUS = new Set([
  'cover',
  'titlepage',
  'halftitlepage',
  'copyright-page',
  'toc',
  'index',
  'colophon',
  'loi',
  'lot',
  'loa',
  'lov',
  'landmarks',
  'page-list',
  'imprint',
  'imprimatur',
  'seriespage',
  'frontispiece',
]);
/** Before the text: kept, counted 0 as the reading position counts front matter. */
const FRONT = new Set([
  'frontmatter',
  'foreword',
  'preface',
  'dedication',
  'epigraph',
  'acknowledgments',
  'introduction',
  'preamble',
  'abstract',
]);
/** After the text: kept, counted after the last chapter. */
const BACK = new Set([
  'backmatter',
  'afterword',
  'appendix',
  'glossary',
  'bibliography',
  'endnotes',
  'rearnotes',
  'footnotes',
]);
const BODY = new Set(['bodymatter', 'chapter', 'part', 'division', 'volume', 'prologue', 'epilogue', 'conclusion']);
/** One note: its text joins the chapter that refers to it. */
const NOTES = new Set(['footnote', 'endnote', 'rearnote', 'note']);

/** EPUB 2 guide types (and stray spellings) that mean an EPUB 3 word. */
const SYNONYMS: Record<string, string> = {
  'title-page': 'titlepage',
  text: 'bodymatter',
  notes: 'endnotes',
  acknowledgements: 'acknowledgments',
  pagelist: 'page-list',
  copyright: 'copyright-page',
};

export type Matter = 'apparatus' | 'front' | 'back' | 'body';

/** The words of `epub:type` and `role` attributes (or guide types), lower case, `doc-` dropped, synonyms mapped. */
export function semanticsOf(...values: (string | undefined)[]): string[] {
  const out: string[] = [];
  for (const value of values) {
    for (const raw of (value ?? '').toLowerCase().split(/\s+/)) {
      if (!raw || raw.includes(':')) continue; // another vocabulary's word (z3998:poem)
      const word = raw.startsWith('doc-') ? raw.slice(4) : raw;
      out.push(SYNONYMS[word] ?? (word.startsWith('index-') ? 'index' : word));
    }
  }
  return out;
}

/** The word that decides how the part is read, if any: apparatus first (a "frontmatter toc" is a toc). */
export function roleOf(semantics: string[]): string | null {
  for (const set of [APPARATUS, FRONT, BACK, BODY]) {
    const found = semantics.find((w) => set.has(w));
    if (found) return found;
  }
  return null;
}

export function noteOf(semantics: string[]): boolean {
  return semantics.some((w) => NOTES.has(w));
}

export function matterOf(role: string | null): Matter | null {
  if (role === null) return null;
  if (APPARATUS.has(role)) return 'apparatus';
  if (FRONT.has(role)) return 'front';
  if (BACK.has(role)) return 'back';
  if (BODY.has(role)) return 'body';
  return null;
}

/** Table-of-contents titles of apparatus, for parts that say nothing of themselves. */
const APPARATUS_TITLE =
  /^(cover|front cover|title ?page|half ?title|copyright( page)?|(table of )?contents|index|colophon|landmarks|list of (illustrations|figures|tables))$/i;

export function isApparatusTitle(title: string): boolean {
  return APPARATUS_TITLE.test(title.trim());
}
