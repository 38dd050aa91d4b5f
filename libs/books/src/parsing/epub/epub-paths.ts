import { posix } from 'node:path';

/** A link inside the book: the document (its path in the archive) and the fragment, if any. */
export interface Target {
  path: string;
  fragment: string | null;
}

/** A percent-encoded part of a link, decoded; as written when it is not valid percent-encoding. */
export function decodeLinkPart(s: string): string {
  try {
    return decodeURIComponent(s);
  } catch {
    return s;
  }
}

/**
 * Where `href`, written in the document at `base`, leads inside the archive; null for a link out
 * of the book (a URL, an absolute path) or one climbing out of the archive (`../../etc`).
 */
export function resolveHref(base: string, href: string): Target | null {
  const link = href.trim();
  if (!link || /^[a-z][a-z0-9+.-]*:/i.test(link) || link.startsWith('//') || link.startsWith('/')) return null;
  const hash = link.indexOf('#');
  const pathPart = (hash >= 0 ? link.slice(0, hash) : link).split('?')[0];
  const fragment = hash >= 0 ? decodeLinkPart(link.slice(hash + 1)) || null : null;
  if (!pathPart) return { path: base, fragment };
  const joined = posix.normalize(posix.join(posix.dirname(base), decodeLinkPart(pathPart)));
  if (joined === '..' || joined.startsWith('../') || joined.startsWith('/')) return null;
  return { path: joined, fragment };
}
