import type { Element } from 'domhandler';
import { BookRejectedError } from '../../book.errors';
import { metadataText } from '../parsed-book';
import { ZipArchive } from '../archive/zip-archive';
import { attrOf, childrenNamed, elementsNamed, parseXml, textOf } from '../markup/xml-tree';
import { resolveHref, Target } from './epub-paths';

/** An EPUB's package document (OPF), the parts of it the parser reads. */
export interface EpubPackage {
  title: string | null;
  author: string | null;
  /** the reading order: content documents' paths, and whether each is in it (`linear="no"`: only for its notes) */
  spine: { path: string; linear: boolean }[];
  /** the EPUB 3 navigation document, if any */
  navPath: string | null;
  /** the EPUB 2 NCX, if any */
  ncxPath: string | null;
  /** the EPUB 2 guide: a type (cover, title-page, text, index…) for a document */
  guide: { type: string; target: Target }[];
}

const notAnEpub = (why: string) => new BookRejectedError(422, `the EPUB cannot be read: ${why}`, 'book_parse_failed');

/** The package document named by META-INF/container.xml, read (entity declarations refused). */
export async function readPackage(zip: ZipArchive): Promise<EpubPackage> {
  const container = zip.find('META-INF/container.xml');
  if (!container) throw notAnEpub('it has no META-INF/container.xml');
  const rootfile = elementsNamed(parseXml(await zip.readXml(container)), 'rootfile').find(
    (r) => (attrOf(r, 'media-type') ?? 'application/oebps-package+xml') === 'application/oebps-package+xml',
  );
  const opfPath = rootfile && attrOf(rootfile, 'full-path');
  const opfName = opfPath ? zip.find(opfPath) : null;
  if (!opfPath || !opfName) throw notAnEpub('its container names no package document');
  const opf = parseXml(await zip.readXml(opfName));

  const manifest = new Map<string, { path: string; mediaType: string; properties: string[] }>();
  for (const item of elementsNamed(opf, 'item')) {
    const id = attrOf(item, 'id');
    const target = resolveHref(opfPath, attrOf(item, 'href') ?? '');
    if (!id || !target) continue;
    manifest.set(id, {
      path: target.path,
      mediaType: (attrOf(item, 'media-type') ?? '').toLowerCase(),
      properties: (attrOf(item, 'properties') ?? '').split(/\s+/),
    });
  }
  const spineEl = elementsNamed(opf, 'spine')[0];
  const spine = (spineEl ? childrenNamed(spineEl, 'itemref') : []).flatMap((ref) => {
    const item = manifest.get(attrOf(ref, 'idref') ?? '');
    if (!item || !/html|x-oeb1-document/.test(item.mediaType)) return []; // images and SVG in the spine hold no text we read
    return [{ path: item.path, linear: attrOf(ref, 'linear') !== 'no' }];
  });
  if (spine.length === 0) throw notAnEpub('its spine lists no content documents');
  const nav = [...manifest.values()].find((i) => i.properties.includes('nav'));
  const tocId = spineEl && attrOf(spineEl, 'toc');
  const ncx =
    (tocId ? manifest.get(tocId) : undefined) ??
    [...manifest.values()].find((i) => i.mediaType === 'application/x-dtbncx+xml');
  const guide = elementsNamed(opf, 'reference').flatMap((r) => {
    const target = resolveHref(opfPath, attrOf(r, 'href') ?? '');
    const type = attrOf(r, 'type');
    return target && type ? [{ type, target }] : [];
  });
  return { ...metadataOf(opf), spine, navPath: nav?.path ?? null, ncxPath: ncx?.path ?? null, guide };
}

/**
 * The title and author: the main title (EPUB 3 `title-type` main, else the first `dc:title`),
 * and the creators who are authors (EPUB 2 `opf:role="aut"`, EPUB 3 a `role` meta refining the
 * creator; creators without a role count as authors; none: the first creator).
 */
function metadataOf(opf: ReturnType<typeof parseXml>): Pick<EpubPackage, 'title' | 'author'> {
  const metadata = elementsNamed(opf, 'metadata')[0];
  if (!metadata) return { title: null, author: null };
  const refines = new Map<string, Map<string, string>>();
  for (const meta of elementsNamed(metadata, 'meta')) {
    const ref = attrOf(meta, 'refines');
    const property = attrOf(meta, 'property');
    if (!ref?.startsWith('#') || !property) continue;
    const props = refines.get(ref.slice(1)) ?? new Map<string, string>();
    props.set(property, textOf(meta));
    refines.set(ref.slice(1), props);
  }
  const refined = (el: Element, property: string) => refines.get(attrOf(el, 'id') ?? '')?.get(property);
  const titles = elementsNamed(metadata, 'title').filter((t) => textOf(t));
  const title = titles.find((t) => refined(t, 'title-type') === 'main') ?? titles[0];
  const creators = elementsNamed(metadata, 'creator').filter((c) => textOf(c));
  const roleOf = (c: Element) => attrOf(c, 'role') ?? refined(c, 'role');
  const authors = creators.filter((c) => (roleOf(c) ?? 'aut') === 'aut');
  const named = (authors.length ? authors : creators.slice(0, 1)).map(textOf);
  return {
    title: title ? metadataText(textOf(title)) : null,
    author: metadataText(named.join(', ')),
  };
}
