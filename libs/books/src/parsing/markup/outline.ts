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
 * entry holding chapters (a part, book or volume: its title says so, its children are titled
 * as chapters, or they start in other documents than it does) is a part, not a chapter, and its
 * children are looked at in turn; any other entry is a chapter, and everything under it names
 * sections of that chapter. Entries come out in reading order (by block); two of a kind at one
 * block are one.
 */
export function flattenOutline(nodes: OutlineNode[], blocks: Block[]): OutlineEntry[] {
  const out: OutlineEntry[] = [];
  const docOf = (n: OutlineNode) => (n.at !== null ? (blocks[n.at]?.doc ?? null) : null);
  const holdsChapters = (n: OutlineNode) =>
    n.at === null ||
    matchHeading(n.title)?.kind === 'part' ||
    n.children.some((c) => matchHeading(c.title)?.kind === 'chapter') ||
    n.children.some((c) => docOf(c) !== null && docOf(c) !== docOf(n));
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
