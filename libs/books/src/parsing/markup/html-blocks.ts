import type { ChildNode, Element } from 'domhandler';
import { parseDocument } from 'htmlparser2';
import { noteOf, roleOf, semanticsOf } from './semantics';
import { cleanText, localName, rawTextOf } from './xml-tree';

/** Enough of an element's text to tell a note marker or a title. */
const MARKER_TEXT_CHARS = 400;

/** A run of text as the page shows it: a paragraph, a heading, a list item, a caption, an image's alt text. */
export interface Block {
  text: string;
  /** 1..6 for a heading (h1..h6) */
  heading: number | null;
  /** the document it comes from (its path in the archive; '' for a lone HTML file) */
  doc: string;
  /** `doc#id` of the anchors that start at or inside it: where a link or a table of contents lands */
  ids: string[];
  /** `doc#id` of the elements holding it: a note's blocks all hold the note's id */
  within: string[];
  /** `doc#id` of the element marked as a footnote or endnote (epub:type, ARIA role) it is part of */
  note: string | null;
  /** `doc#id` of the notes it refers to (its noterefs) */
  refs: string[];
  /** what its enclosing elements say it is (epub:type, ARIA role): "cover", "chapter", "index"… */
  role: string | null;
  /** false in a document outside the reading order (an EPUB's `linear="no"`): read only for its notes */
  linear: boolean;
}

export interface HtmlSource {
  /** the document's path in its archive ('' for a lone HTML file): ids and links are keyed by it */
  doc: string;
  /** an internal link's target as `doc#id` (`doc#` for a whole document), null for links out of the book */
  resolve: (href: string) => string | null;
  linear?: boolean;
}

export interface HtmlDocument {
  blocks: Block[];
  /** the head's <title> */
  title: string | null;
  /** the head's <meta name="author"> (or DC.creator) */
  author: string | null;
}

export const anchorKey = (doc: string, id: string) => `${doc}#${id}`;

/** Elements whose content is not text of the book. */
const SKIPPED = new Set([
  'head',
  'script',
  'style',
  'template',
  'noscript',
  'iframe',
  'object',
  'embed',
  'svg',
  'audio',
  'video',
  'canvas',
  'button',
  'input',
  'select',
  'textarea',
  'rp',
  'rt',
  // a table of contents or a site's navigation inside the text (the EPUB's own nav is read apart)
  'nav',
  'map',
]);

/** Elements that end the running paragraph and start another. */
const BLOCKS = new Set([
  'html',
  'body',
  'p',
  'div',
  'section',
  'article',
  'aside',
  'header',
  'footer',
  'main',
  'blockquote',
  'pre',
  'li',
  'ul',
  'ol',
  'dl',
  'dt',
  'dd',
  'figure',
  'figcaption',
  'table',
  'thead',
  'tbody',
  'tfoot',
  'tr',
  'caption',
  'hr',
  'address',
  'details',
  'summary',
  'center',
  'fieldset',
  'legend',
  'hgroup',
]);

const HEADING = /^h([1-6])$/;
/** A footnote marker's text: 1, [12], (a), *, †… */
const NOTE_MARKER = /^[[(]?(?:\d{1,3}|[*†‡§¶]{1,3}|[a-z])[\])]?\.?$/i;

/** Ends an element's visit. */
type Leave = () => void;
const SKIP = null;

/**
 * An HTML or XHTML document as blocks of text in reading order, with what the book's structure
 * needs kept beside the text: headings and their level, anchors (where links and the table of
 * contents land), notes and the noterefs that point at them, and the semantic role of each part
 * (epub:type, ARIA `doc-*` roles). Images keep their alt text (`[Image: …]`) and figures their
 * captions; scripts, styles, forms, media, page-break markers and hidden elements are dropped.
 * Walks the tree without recursion, so deep nesting costs memory, not the stack.
 */
export function htmlBlocks(html: string, source: HtmlSource): HtmlDocument {
  const dom = parseDocument(html, { recognizeSelfClosing: true, recognizeCDATA: true });
  const writer = new BlockWriter(source);
  const stack: (ChildNode | Leave)[] = [...dom.children].reverse();
  while (stack.length) {
    const step = stack.pop()!;
    if (typeof step === 'function') {
      step();
      continue;
    }
    if (step.type === 'text') {
      writer.text(step.data);
      continue;
    }
    if (step.type === 'cdata') {
      for (let i = step.children.length - 1; i >= 0; i--) stack.push(step.children[i]);
      continue;
    }
    if (step.type !== 'tag') continue; // comments, directives, <script> and <style>
    const leave = writer.enter(step);
    if (leave === SKIP) continue;
    stack.push(leave);
    for (let i = step.children.length - 1; i >= 0; i--) stack.push(step.children[i]);
  }
  writer.flush();
  return { blocks: writer.blocks, ...headOf(dom.children) };
}

/** Writes blocks as the walk enters and leaves elements. */
class BlockWriter {
  readonly blocks: Block[] = [];
  private buf = '';
  private pendingIds: string[] = [];
  private refs: string[] = [];
  private readonly idStack: string[] = [];
  private readonly roleStack: string[] = [];
  private readonly noteStack: string[] = [];
  private heading: number | null = null;
  private inHeading = 0;
  private start: Pick<Block, 'within' | 'role' | 'note'> | null = null;
  private anonymousNotes = 0;

  constructor(private readonly source: HtmlSource) {}

  /** Visits an element: null to skip it and its content, else what to do on leaving it. */
  enter(el: Element): Leave | typeof SKIP {
    const name = localName(el.name);
    const attrs = el.attribs;
    if (SKIPPED.has(name) || 'hidden' in attrs || attrs['aria-hidden'] === 'true') return SKIP;
    const semantics = semanticsOf(attrs['epub:type'], attrs.role);
    if (semantics.includes('pagebreak')) return SKIP; // page numbers of the print edition
    if (name === 'img') {
      const alt = (attrs.alt ?? '').trim();
      if (alt) this.text(` [Image: ${alt}] `);
      return SKIP;
    }
    if (name === 'math') {
      if (attrs.alttext) this.text(` ${attrs.alttext} `);
      return SKIP;
    }
    if (name === 'br' || name === 'wbr') {
      if (name === 'br') this.text(' ');
      return SKIP;
    }
    if (name === 'a' && attrs.href) {
      const target = this.source.resolve(attrs.href);
      if (target && isNoteRef(el, semantics)) {
        this.refs.push(target); // the marker itself is not text: the note joins the chapter
        return SKIP;
      }
    }

    const leaving: Leave[] = [];
    for (const id of [attrs.id, name === 'a' ? attrs.name : undefined]) {
      if (!id) continue;
      const key = anchorKey(this.source.doc, id);
      this.pendingIds.push(key);
      this.idStack.push(key);
      leaving.push(() => this.idStack.pop());
    }
    const role = roleOf(semantics);
    if (role) {
      this.roleStack.push(role);
      leaving.push(() => this.roleStack.pop());
    }
    if (noteOf(semantics)) {
      this.noteStack.push(anchorKey(this.source.doc, attrs.id || `\u0000note${++this.anonymousNotes}`));
      leaving.push(() => this.noteStack.pop());
    }
    const heading = HEADING.exec(name);
    if (heading && this.inHeading === 0) {
      this.flush();
      this.heading = Number(heading[1]);
      this.inHeading++;
      leaving.push(() => {
        this.flush();
        this.heading = null;
        this.inHeading--;
      });
    } else if (BLOCKS.has(name) && this.inHeading === 0) {
      this.flush();
      leaving.push(() => this.flush());
    } else if (name === 'td' || name === 'th') {
      this.text(' ');
    }
    return () => {
      for (let i = leaving.length - 1; i >= 0; i--) leaving[i]();
    };
  }

  text(data: string): void {
    if (!this.start && /\S/.test(data)) {
      this.start = {
        within: [...this.idStack],
        role: this.roleStack.at(-1) ?? null,
        note: this.noteStack.at(-1) ?? null,
      };
    }
    this.buf += data;
  }

  /** Ends the running block; an empty one keeps its anchors and noterefs for the next. */
  flush(): void {
    const text = cleanText(this.buf);
    this.buf = '';
    if (!text || !this.start) {
      this.start = null;
      return;
    }
    this.blocks.push({
      text,
      heading: this.heading,
      doc: this.source.doc,
      ids: this.pendingIds,
      refs: this.refs,
      ...this.start,
      linear: this.source.linear ?? true,
    });
    this.pendingIds = [];
    this.refs = [];
    this.start = null;
  }
}

/** A link to a note: marked so (epub:type noteref, role doc-noteref), or a bare marker in superscript. */
function isNoteRef(el: Element, semantics: string[]): boolean {
  if (semantics.includes('noteref')) return true;
  const text = cleanText(rawTextOf(el, MARKER_TEXT_CHARS));
  if (!NOTE_MARKER.test(text)) return false;
  const parent = el.parent && 'name' in el.parent ? localName(el.parent.name) : '';
  return parent === 'sup' || hasDescendant(el, 'sup') || /\b(note|fn|footnote)/i.test(el.attribs.class ?? '');
}

function hasDescendant(el: Element, name: string): boolean {
  const stack: ChildNode[] = [...el.children];
  while (stack.length) {
    const n = stack.pop()!;
    if (n.type === 'tag' && localName(n.name) === name) return true;
    if ('children' in n) stack.push(...n.children);
  }
  return false;
}

/** The <title> and author of the document's <head>. */
function headOf(nodes: ChildNode[]): Pick<HtmlDocument, 'title' | 'author'> {
  let title: string | null = null;
  let author: string | null = null;
  const html = nodes.find((n): n is Element => n.type === 'tag' && localName(n.name) === 'html');
  const head = (html?.children ?? nodes).find((n): n is Element => n.type === 'tag' && localName(n.name) === 'head');
  for (const n of head?.children ?? []) {
    if (n.type !== 'tag') continue;
    const name = localName(n.name);
    if (name === 'title' && title === null) title = cleanText(rawTextOf(n, MARKER_TEXT_CHARS)) || null;
    if (name === 'meta' && author === null && /^(author|dc\.creator|dcterms\.creator)$/i.test(n.attribs.name ?? ''))
      author = cleanText(n.attribs.content ?? '') || null;
  }
  return { title, author };
}
