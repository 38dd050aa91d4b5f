import { HTML_FACTS, htmlBook } from '../../../../../test/support/book-fixtures';
import { BookRejectedError } from '../../book.errors';
import { ParsedBook } from '../parsed-book';
import { parseHtml } from './html-parser';

const opts = { fallbackTitle: 'Upload' };
const outline = (b: ParsedBook) => b.chapters.map((c) => [c.index, c.title]);
const texts = (b: ParsedBook) => b.chapters.map((c) => c.paragraphs.map((p) => p.text));
const page = (body: string, head = '') => `<!doctype html><html><head>${head}</head><body>${body}</body></html>`;

describe(parseHtml.name, () => {
  it('reads the fixture book: h2 chapters under the title h1, an h3 section, the note with its chapter, alt text', () => {
    const book = parseHtml(htmlBook(), opts);
    expect(book.metadata).toEqual({ title: HTML_FACTS.title, author: HTML_FACTS.author });
    expect(book.chapters.map(({ index, title }) => ({ index, title }))).toEqual(HTML_FACTS.chapters);
    const where = (text: string) =>
      book.chapters.flatMap((c) => c.paragraphs.filter((p) => p.text.includes(text)).map((p) => [c.title, p.section]));
    for (const p of HTML_FACTS.passages) expect(where(p.text)).toEqual([[p.chapter, null]]);
    expect(where('surfers wait')).toEqual([['Spring Tides', 'The Bore']]);
    expect(where(HTML_FACTS.footnote.text)).toEqual([[HTML_FACTS.footnote.chapter, 'Notes']]);
    expect(where(HTML_FACTS.alt.text)).toEqual([[HTML_FACTS.alt.chapter, null]]);
    // the script, the style and the navigation are not text; the note's marker is not in the sentence
    const all = texts(book).flat().join(' ');
    expect(all).not.toMatch(/not text|max-width|Spring · Neap/);
    expect(all).toContain('at the quarter moons, when');
  });

  it('takes a part heading holding chapters as a part, its chapters counted by their numbers', () => {
    const book = parseHtml(
      page(
        '<h1>Part One</h1><h2>Chapter 1</h2><p>One.</p><h2>Chapter 2</h2><p>Two.</p>' +
          '<h1>Part Two</h1><p>An epigraph.</p><h2>Chapter 3</h2><h3>A scene</h3><p>Three.</p>',
      ),
      opts,
    );
    expect(outline(book)).toEqual([
      [1, 'Chapter 1'],
      [2, 'Chapter 2'],
      [3, 'Chapter 3'],
    ]);
    expect(book.chapters[2].paragraphs).toEqual([
      { text: 'An epigraph.', page: null, section: 'Part Two' },
      { text: 'A scene', page: null, section: 'A scene' },
      { text: 'Three.', page: null, section: 'A scene' },
    ]);
  });

  it('counts a preface or an introduction before the first chapter as front matter, 0', () => {
    const book = parseHtml(
      page(
        '<h2>Introduction</h2><p>Why.</p><h2>Spring</h2><p>Buds.</p><h2>Summer</h2><p>Heat.</p><h2>Afterword</h2><p>So.</p>',
      ),
      opts,
    );
    expect(outline(book)).toEqual([
      [0, 'Introduction'],
      [1, 'Spring'],
      [2, 'Summer'],
      [3, 'Afterword'],
    ]);
  });

  it('keeps one chapter with its sections when the only top heading reads as a chapter', () => {
    const book = parseHtml(
      page('<h1>Chapter 1</h1><p>Intro.</p><h2>First</h2><p>A.</p><h2>Second</h2><p>B.</p>'),
      opts,
    );
    expect(outline(book)).toEqual([[1, 'Chapter 1']]);
  });

  it('is one chapter under the upload title without headings; long text before the first heading is front matter', () => {
    expect(outline(parseHtml(page('<p>Just some words.</p>'), opts))).toEqual([[1, 'Upload']]);
    const long = 'A long foreword of many words. '.repeat(30);
    const book = parseHtml(page(`<p>${long}</p><h2>Chapter 1</h2><p>One.</p>`), opts);
    expect(outline(book)).toEqual([
      [0, 'Front matter'],
      [1, 'Chapter 1'],
    ]);
  });

  it('leaves out hidden elements, page-break markers and forms; reads table cells apart and <br> as a space', () => {
    const book = parseHtml(
      page(
        '<p>Seen<span hidden>unseen</span> here.<span epub:type="pagebreak" title="12">12</span></p>' +
          '<table><tr><td>cell one</td><td>cell two</td></tr></table><p>line<br>break</p><form><input value="typed"></form>',
      ),
      opts,
    );
    expect(texts(book)).toEqual([['Seen here.', 'cell one cell two', 'line break']]);
  });

  it('keeps a note where it stands when no text before it refers to it', () => {
    // the marker alone in its paragraph: no text to join the note to
    const book = parseHtml(
      page('<p><sup><a href="#fn1">[1]</a></sup></p><ol><li id="fn1"><p>Only in the note.</p></li></ol>'),
      opts,
    );
    expect(texts(book)).toEqual([['Only in the note.']]);
  });

  it('refuses an HTML file that declares entities', () => {
    const hostile = `<!DOCTYPE html [<!ENTITY a "aaaaaaaaaa"><!ENTITY b "&a;&a;&a;&a;">]><html><body><p>&b;</p></body></html>`;
    expect(() => parseHtml(hostile, opts)).toThrow(BookRejectedError);
    expect(() => parseHtml(hostile, opts)).toThrow(/entit/);
  });
});
