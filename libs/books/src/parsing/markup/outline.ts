import { matchHeading } from '../headings';
import { Block } from './html-blocks';

/** An entry of a book's outline: a table of contents' entry, or a heading with those under it. */
export interface OutlineNode {
  title: string;
  /** the block it starts at; null for an entry that links nowhere (a nav heading without a link) */
  at: number | null;
  children: OutlineNode[];
}

/** Where a part, a chapter or a section of a chapter starts, flattened from the outline. */
export interface OutlineEntry {
  at: number;
  kind: 'part' | 'chapter' | 'section';
  title: string;
}

/** Deeper outlines are cut here: levels past it are sections of sections, and a hostile one cannot recurse far. */
export const MAX_OUTLINE_DEPTH = 32;

const KIND_ORDER = { part: 0, chapter: 1, section: 2 };

/**
 * Flattens an outline into chapter starts, the way the reading position counts chapters: an
 * entry that holds chapters is a part, not a chapter, and its children are looked at in turn; any
 * other entry is a chapter, and everything under it names sections of that chapter. An entry
 * holds chapters when its text is marked a part or volume (epub:type), its title reads as one
 * (Part One, Book II, Volume 3), its children's titles read as chapters, or it links nowhere (a
 * heading grouping entries); an entry marked or titled as a chapter never does. Nested entries
 * are otherwise sections, wherever they start (a chapter split into files is still one chapter).
 * Entries come out in reading order (by block); two of a kind at one block are one.
 */
export function flattenOutline(nodes: OutlineNode[], blocks: Block[]): OutlineEntry[] {
  const out: OutlineEntry[] = [];
  const holdsChapters = (n: OutlineNode) => {
    if (n.at === null) return true;
    const role = blocks[n.at]?.role;
    if (role === 'part' || role === 'volume') return true;
    const kind = matchHeading(n.title)?.kind;
    if (role === 'chapter' || kind === 'chapter') return false;
    return kind === 'part' || n.children.some((c) => matchHeading(c.title)?.kind === 'chapter');
  };
  const sections = (n: OutlineNode, depth: number) => {
    if (depth > MAX_OUTLINE_DEPTH) return;
    for (const c of n.children) {
      if (c.at !== null) out.push({ at: c.at, kind: 'section', title: c.title });
      sections(c, depth + 1);
    }
  };
  const visit = (list: OutlineNode[], depth: number) => {
    if (depth > MAX_OUTLINE_DEPTH) return;
    for (const n of list) {
      if (n.children.length > 0 && holdsChapters(n)) {
        if (n.at !== null) out.push({ at: n.at, kind: 'part', title: n.title });
        visit(n.children, depth + 1);
      } else {
        if (n.at !== null) out.push({ at: n.at, kind: 'chapter', title: n.title });
        sections(n, depth + 1);
      }
    }
  };
  visit(nodes, 0);
  const sorted = out
    .map((e, i) => ({ e, i }))
    .sort((x, y) => x.e.at - y.e.at || KIND_ORDER[x.e.kind] - KIND_ORDER[y.e.kind] || x.i - y.i)
    .map(({ e }) => e);
  return sorted.filter((e, i) => i === 0 || e.at !== sorted[i - 1].at || e.kind !== sorted[i - 1].kind);
}

/**
 * The outline a document's headings make (for a lone HTML file, a Word document, or an EPUB
 * without a usable table of contents): each heading holds the deeper ones after it. One top
 * heading holding all the others is the document's title, not a chapter (`title`), unless it reads
 * as one ("Chapter 1" with its sections).
 */
export function headingOutline(blocks: Block[]): { nodes: OutlineNode[]; title: { text: string; at: number } | null } {
  const roots: OutlineNode[] = [];
  const open: { level: number; node: OutlineNode }[] = [];
  blocks.forEach((b, at) => {
    if (b.heading === null || !b.linear || b.note !== null) return;
    const node: OutlineNode = { title: b.text.slice(0, 200), at, children: [] };
    while (open.length && open.at(-1)!.level >= b.heading) open.pop();
    if (open.length >= MAX_OUTLINE_DEPTH) return; // deeper than any book: read as text of its section
    (open.length ? open.at(-1)!.node.children : roots).push(node);
    open.push({ level: b.heading, node });
  });
  if (roots.length === 1 && roots[0].children.length > 0 && matchHeading(roots[0].title)?.kind !== 'chapter') {
    return { nodes: roots[0].children, title: { text: roots[0].title, at: roots[0].at! } };
  }
  return { nodes: roots, title: null };
}
