import type { ChildNode, Document, Element } from 'domhandler';
import { parseDocument } from 'htmlparser2';

/**
 * Small XML documents (an EPUB's container, package, NCX and encryption; a Word document's
 * properties) as a tree, with htmlparser2 in XML mode: it reads no DTD and expands no entity
 * but XML's own five and character references (declarations are refused before, xml-guard.ts).
 * Names are matched by their local part, whatever prefix a producer chose (`dc:title`, `opf:role`).
 */
export function parseXml(xml: string): Document {
  return parseDocument(xml, { xmlMode: true });
}

export const localName = (name: string) => name.slice(name.indexOf(':') + 1).toLowerCase();

/** The elements under `root` with this local name, in document order (no recursion: depth costs nothing). */
export function elementsNamed(root: Document | Element, name: string): Element[] {
  const out: Element[] = [];
  const stack: ChildNode[] = [...root.children].reverse();
  while (stack.length) {
    const n = stack.pop()!;
    if (n.type !== 'tag' && n.type !== 'script' && n.type !== 'style') continue;
    if (localName(n.name) === name) out.push(n);
    for (let i = n.children.length - 1; i >= 0; i--) stack.push(n.children[i]);
  }
  return out;
}

/** The element's children with this local name. */
export function childrenNamed(el: Element, name: string): Element[] {
  return el.children.filter((c): c is Element => c.type === 'tag' && localName(c.name) === name);
}

/** An attribute by its local name (`role` finds `opf:role`). */
export function attrOf(el: Element, name: string): string | undefined {
  if (el.attribs[name] !== undefined) return el.attribs[name];
  const key = Object.keys(el.attribs).find((k) => localName(k) === name);
  return key === undefined ? undefined : el.attribs[key];
}

/** The element's text, whitespace collapsed (one argument: it is passed to `map`). */
export function textOf(el: Element): string {
  return cleanText(rawTextOf(el));
}

/** The element's text as written, read up to about `max` characters (all by default). */
export function rawTextOf(el: Element, max = Number.POSITIVE_INFINITY): string {
  let out = '';
  const stack: ChildNode[] = [...el.children].reverse();
  while (stack.length && out.length < max) {
    const n = stack.pop()!;
    if (n.type === 'text') out += n.data;
    else if ('children' in n) for (let i = n.children.length - 1; i >= 0; i--) stack.push(n.children[i]);
  }
  return out;
}

/** Whitespace collapsed (no-break spaces too); soft hyphens and zero-width spaces gone. */
export function cleanText(s: string): string {
  return s
    .replace(/[\u00ad\u200b\ufeff]/g, '')
    .replace(/[\s\u00a0]+/g, ' ')
    .trim();
}
