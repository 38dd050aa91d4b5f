/**
 * Documents and citations as the Messages API has them: the checks of `document` blocks (plain
 * text and custom content sources, citations enabled on all or none), the documents of a
 * request in the order the API numbers them (`document_index`), and the citations a reply makes
 * of them: `content_block_location` for custom content (block indices, exclusive end),
 * `char_location` for plain text, with `cited_text` the exact text pointed at.
 */
import { asBlocks } from './validate-request';

export interface RequestDocument {
  title: string | null;
  /** custom content: its text blocks; plain text: one entry, the whole text */
  kind: 'content' | 'text';
  blocks: string[];
}

/** How a scripted reply cites: the request's document `document` (0-based), blocks [start, end) or, for plain text, all of it. */
export interface FakeCite {
  document: number;
  start?: number;
  end?: number;
}

const TITLE_MAX = 500;

/** The first problem with a document block, in the real API's words, or null. */
export function documentViolation(block: Record<string, any>, at: string): string | null {
  const source = block.source;
  if (typeof source !== 'object' || source === null) return `${at}.source: Field required`;
  if (block.title !== undefined && block.title !== null) {
    if (typeof block.title !== 'string') return `${at}.title: Input should be a valid string`;
    if (block.title.length > TITLE_MAX) return `${at}.title: String should have at most ${TITLE_MAX} characters`;
  }
  if (block.context !== undefined && block.context !== null && typeof block.context !== 'string')
    return `${at}.context: Input should be a valid string`;
  if (block.citations !== undefined && block.citations !== null && typeof block.citations?.enabled !== 'boolean')
    return `${at}.citations.enabled: Input should be a valid boolean`;
  switch (source.type) {
    case 'text':
      if (source.media_type !== 'text/plain') return `${at}.source.text.media_type: Input should be 'text/plain'`;
      if (typeof source.data !== 'string') return `${at}.source.text.data: Input should be a valid string`;
      return null;
    case 'content': {
      if (typeof source.content === 'string') return null;
      if (!Array.isArray(source.content)) return `${at}.source.content.content: Input should be a valid list`;
      if (source.content.length === 0) return `${at}.source.content.content: List should have at least 1 item`;
      for (const [i, inner] of source.content.entries()) {
        const where = `${at}.source.content.content.${i}`;
        if (inner?.type !== 'text' && inner?.type !== 'image')
          return `${where}: Input tag '${inner?.type}' is not 'text' or 'image'`;
        if (inner.type === 'text') {
          if (typeof inner.text !== 'string') return `${where}.text: Input should be a valid string`;
          if (inner.text.trim() === '') return `${where}: text content blocks must contain non-whitespace text`;
        }
      }
      return null;
    }
    case 'base64':
    case 'url':
    case 'file':
      return null;
    default:
      return `${at}.source: Input tag '${source.type}' found using 'type' does not match any of the expected tags: 'base64', 'content', 'file', 'text', 'url'`;
  }
}

/** Citations enabled on some documents but not others: the API takes all or none. */
export function mixedCitations(body: any): string | null {
  const docs = documentBlocks(body);
  const enabled = docs.filter((d) => d.citations?.enabled === true).length;
  return enabled > 0 && enabled < docs.length
    ? 'Citations must be enabled for all documents or for none of them within a request.'
    : null;
}

/** The request's document blocks, in the order document_index counts them (messages in order, blocks in order). */
function documentBlocks(body: any): any[] {
  return (body?.messages ?? []).flatMap((m: any) => asBlocks(m.content).filter((b) => b?.type === 'document'));
}

/** The request's documents with citations enabled, as replies cite them. */
export function citableDocuments(body: any): RequestDocument[] {
  return documentBlocks(body)
    .filter((d) => d.citations?.enabled === true)
    .map((d) => {
      const title = typeof d.title === 'string' ? d.title : null;
      if (d.source.type === 'text') return { title, kind: 'text' as const, blocks: [d.source.data as string] };
      const content =
        typeof d.source.content === 'string' ? [{ type: 'text', text: d.source.content }] : d.source.content;
      return {
        title,
        kind: 'content' as const,
        blocks: content.filter((b: any) => b.type === 'text').map((b: any) => b.text),
      };
    });
}

/** The citation the API would return for `cite` (a scripted pointer must point into what was sent). */
export function citationOf(documents: RequestDocument[], cite: FakeCite): Record<string, unknown> {
  const doc = documents[cite.document];
  if (!doc)
    throw new Error(
      `fake-anthropic: a scripted citation names document ${cite.document}, the request has ${documents.length}`,
    );
  if (doc.kind === 'text') {
    const text = doc.blocks[0];
    const start = cite.start ?? 0;
    const end = cite.end ?? text.length;
    return {
      type: 'char_location',
      cited_text: text.slice(start, end),
      document_index: cite.document,
      document_title: doc.title,
      start_char_index: start,
      end_char_index: end,
      file_id: null,
    };
  }
  const start = cite.start ?? 0;
  const end = cite.end ?? start + 1;
  if (start < 0 || end <= start || end > doc.blocks.length)
    throw new Error(
      `fake-anthropic: blocks [${start}, ${end}) are outside document ${cite.document} (${doc.blocks.length} blocks)`,
    );
  return {
    type: 'content_block_location',
    cited_text: doc.blocks.slice(start, end).join(''),
    document_index: cite.document,
    document_title: doc.title,
    start_block_index: start,
    end_block_index: end,
    file_id: null,
  };
}

/** The block of the request's documents sharing the most words (4 letters or more) with `question`. */
export function closestBlock(documents: RequestDocument[], question: string): FakeCite | null {
  const words = new Set(question.toLowerCase().match(/[a-z]{4,}/g) ?? []);
  let best: (FakeCite & { score: number }) | null = null;
  documents.forEach((d, document) => {
    if (d.kind !== 'content') return;
    d.blocks.forEach((text, start) => {
      const score = new Set((text.toLowerCase().match(/[a-z]{4,}/g) ?? []).filter((w) => words.has(w))).size;
      if (!best || score > best.score) best = { document, start, end: start + 1, score };
    });
  });
  if (!best) return documents.length ? { document: 0 } : null;
  const { score: _score, ...cite } = best as FakeCite & { score: number };
  return cite;
}
