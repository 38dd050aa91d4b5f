import type { Element } from 'domhandler';
import { parseDocument } from 'htmlparser2';
import { MAX_OUTLINE_DEPTH } from '../markup/outline';
import { semanticsOf } from '../markup/semantics';
import { attrOf, childrenNamed, elementsNamed, localName, parseXml, textOf } from '../markup/xml-tree';
import { resolveHref, Target } from './epub-paths';

/** A table of contents' entry: its title, where it leads (null: a heading that links nowhere), what it holds. */
export interface TocEntry {
  title: string;
  target: Target | null;
  children: TocEntry[];
}

/** A landmark (EPUB 3) or guide reference (EPUB 2): what a document (or a place in one) is. */
export interface Landmark {
  type: string;
  target: Target;
}

const MAX_TITLE = 200;

/**
 * The EPUB 3 navigation document: its `toc` nav (nested `ol`s of `a` or `span` labels) and its
 * `landmarks` nav (links typed cover, bodymatter, index…).
 */
export function readNav(xhtml: string, navPath: string): { toc: TocEntry[]; landmarks: Landmark[] } {
  const dom = parseDocument(xhtml, { recognizeSelfClosing: true });
  const navs = elementsNamed(dom, 'nav');
  const typed = (word: string) => navs.find((n) => semanticsOf(n.attribs['epub:type'], n.attribs.role).includes(word));
  const tocNav = typed('toc');
  const list = tocNav && elementsNamed(tocNav, 'ol')[0];
  const toc = list ? navList(list, navPath, 0) : [];
  const landmarksNav = typed('landmarks');
  const landmarks = (landmarksNav ? elementsNamed(landmarksNav, 'a') : []).flatMap((a) => {
    const target = resolveHref(navPath, a.attribs.href ?? '');
    const type = semanticsOf(a.attribs['epub:type'])[0];
    return target && type ? [{ type, target }] : [];
  });
  return { toc, landmarks };
}

function navList(ol: Element, navPath: string, depth: number): TocEntry[] {
  if (depth > MAX_OUTLINE_DEPTH) return [];
  return childrenNamed(ol, 'li').flatMap((li) => {
    const label = li.children.find((c): c is Element => c.type === 'tag' && ['a', 'span'].includes(localName(c.name)));
    const sub = childrenNamed(li, 'ol')[0];
    const children = sub ? navList(sub, navPath, depth + 1) : [];
    const title = label ? textOf(label).slice(0, MAX_TITLE) : '';
    if (!title) return children; // an unlabelled item: its entries stand in its place
    const href = label && localName(label.name) === 'a' ? label.attribs.href : undefined;
    return [{ title, target: href ? resolveHref(navPath, href) : null, children }];
  });
}

/** The EPUB 2 NCX's navMap: nested navPoints, each a label and a `content src`. */
export function readNcx(xml: string, ncxPath: string): TocEntry[] {
  const navMap = elementsNamed(parseXml(xml), 'navmap')[0];
  return navMap ? navPoints(navMap, ncxPath, 0) : [];
}

function navPoints(parent: Element, ncxPath: string, depth: number): TocEntry[] {
  if (depth > MAX_OUTLINE_DEPTH) return [];
  return childrenNamed(parent, 'navpoint').flatMap((point) => {
    const label = childrenNamed(point, 'navlabel')[0];
    const content = childrenNamed(point, 'content')[0];
    const children = navPoints(point, ncxPath, depth + 1);
    const title = label ? textOf(label).slice(0, MAX_TITLE) : '';
    if (!title) return children;
    const src = content ? attrOf(content, 'src') : undefined;
    return [{ title, target: src ? resolveHref(ncxPath, src) : null, children }];
  });
}
