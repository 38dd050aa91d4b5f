import { assertNoEntityDeclarations } from '../archive/xml-guard';
import { decodeLinkPart } from '../epub/epub-paths';
import { metadataText, ParsedBook, ParseOptions } from '../parsed-book';
import { chaptersFromBlocks } from './chapters-from-blocks';
import { anchorKey, htmlBlocks } from './html-blocks';
import { flattenOutline, headingOutline } from './outline';

/**
 * One HTML file (or a Word document turned into HTML): its headings are the outline, so the
 * chapters are the top headings (one heading above all the others is the title, not a chapter),
 * a part's heading (Part One) holds chapters, and deeper headings name sections. The title and
 * author come from the head (<title>, <meta name="author">), else the title heading.
 */
export function parseHtml(html: string, opts: ParseOptions): ParsedBook {
  assertNoEntityDeclarations(html, 'the HTML document');
  const doc = htmlBlocks(html, {
    doc: '',
    resolve: (href) => (href.startsWith('#') && href.length > 1 ? anchorKey('', decodeLinkPart(href.slice(1))) : null),
  });
  const outline = headingOutline(doc.blocks);
  const entries = flattenOutline(outline.nodes, doc.blocks);
  const chapters = chaptersFromBlocks(doc.blocks, entries, {
    fallbackTitle: opts.fallbackTitle,
    skip: outline.title ? new Set([outline.title.at]) : undefined,
  });
  return {
    chapters,
    metadata: { title: metadataText(doc.title ?? outline.title?.text), author: metadataText(doc.author) },
  };
}
