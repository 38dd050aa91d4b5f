import { ZipArchive } from '../archive/zip-archive';
import { chaptersFromBlocks } from '../markup/chapters-from-blocks';
import { anchorKey, Block, htmlBlocks } from '../markup/html-blocks';
import { flattenOutline, headingOutline, OutlineEntry, OutlineNode } from '../markup/outline';
import { roleOf, semanticsOf } from '../markup/semantics';
import { DEFAULT_MAX_EXPANDED_BYTES, ParsedBook, ParseOptions } from '../parsed-book';
import { assertNotEncrypted } from './epub-encryption';
import { resolveHref, Target } from './epub-paths';
import { EpubPackage, readPackage } from './epub-package';
import { Landmark, readNav, readNcx, TocEntry } from './epub-toc';

/** Parts of an EPUB that are XML, whatever they are for. */
const XML_PART = /\.(xhtml|html?|xml|opf|ncx|svg|smil)$/i;

/**
 * An EPUB 2 or 3, read as its reader shows it: the spine's documents in reading order, chapters
 * and their titles from the table of contents (the EPUB 3 nav, else the EPUB 2 NCX; neither:
 * the documents' headings), nested entries flattened into chapters and their sections; the
 * title and author from the package metadata; cover, title page, copyright, contents and index
 * (by epub:type, landmarks or guide) dropped, front matter counted 0; notes moved to the chapter
 * that refers to them. Refused: a DRM-encrypted EPUB, and (by the zip reader) bombs, paths out
 * of the archive and XML declaring entities (in any of its XML parts, read for the book or not).
 */
export async function parseEpub(bytes: Buffer, opts: ParseOptions): Promise<ParsedBook> {
  const zip = await ZipArchive.open(bytes, opts.maxExpandedBytes ?? DEFAULT_MAX_EXPANDED_BYTES);
  try {
    await assertNotEncrypted(zip);
    const pkg = await readPackage(zip);
    const { toc, landmarks } = await tableOfContents(zip, pkg);
    const { blocks, position } = await readSpine(zip, pkg, landmarks);
    // the XML parts the book does not use are checked too: a hostile one is refused wherever it is
    for (const name of zip.unread()) if (XML_PART.test(name)) await zip.readXml(name);

    let entries: OutlineEntry[] = flattenOutline(toOutline(toc, position), blocks);
    let skip: Set<number> | undefined;
    if (entries.length === 0) {
      // no usable table of contents: the headings make one
      const outline = headingOutline(blocks);
      entries = flattenOutline(outline.nodes, blocks);
      if (outline.title) skip = new Set([outline.title.at]);
    }
    const body = landmarks.find((l) => l.type === 'bodymatter');
    const chapters = chaptersFromBlocks(blocks, entries, {
      fallbackTitle: pkg.title ?? opts.fallbackTitle,
      bodyStart: body ? position(body.target) : null,
      skip,
    });
    return { chapters, metadata: { title: pkg.title, author: pkg.author } };
  } finally {
    zip.close();
  }
}

/** The nav's toc and landmarks (EPUB 3), else the NCX (EPUB 2) with the guide as landmarks. */
async function tableOfContents(zip: ZipArchive, pkg: EpubPackage): Promise<{ toc: TocEntry[]; landmarks: Landmark[] }> {
  const guide = pkg.guide.flatMap((g) => semanticsOf(g.type).map((type) => ({ type, target: g.target })));
  let toc: TocEntry[] = [];
  let landmarks: Landmark[] = [];
  const nav = pkg.navPath ? zip.find(pkg.navPath) : null;
  if (nav && pkg.navPath) ({ toc, landmarks } = readNav(await zip.readXml(nav), pkg.navPath));
  const ncx = pkg.ncxPath ? zip.find(pkg.ncxPath) : null;
  if (toc.length === 0 && ncx && pkg.ncxPath) toc = readNcx(await zip.readXml(ncx), pkg.ncxPath);
  return { toc, landmarks: [...landmarks, ...guide] };
}

/**
 * The spine's documents as blocks, in order, each block that says nothing of itself taking its
 * document's role from the landmarks or guide (and the nav document, when in the spine, being a
 * table of contents); and where a link lands among the blocks.
 */
async function readSpine(zip: ZipArchive, pkg: EpubPackage, landmarks: Landmark[]) {
  const docRoles = new Map<string, string>();
  if (pkg.navPath) docRoles.set(pkg.navPath, 'toc');
  for (const l of landmarks) {
    const role = roleOf([l.type]);
    if (role && !l.target.fragment && !docRoles.has(l.target.path)) docRoles.set(l.target.path, role);
  }
  const blocks: Block[] = [];
  const docStart = new Map<string, number>();
  const read = new Set<string>();
  for (const item of pkg.spine) {
    const name = zip.find(item.path);
    if (!name || read.has(item.path)) continue;
    read.add(item.path);
    const start = blocks.length;
    const doc = htmlBlocks(await zip.readXml(name), {
      doc: item.path,
      linear: item.linear,
      resolve: (href) => {
        const target = resolveHref(item.path, href);
        return target ? anchorKey(target.path, target.fragment ?? '') : null;
      },
    });
    const role = docRoles.get(item.path) ?? null;
    for (const b of doc.blocks) blocks.push(role && b.role === null ? { ...b, role } : b);
    // a document without text (a cover image, the nav itself) is no place to land: an entry
    // linking to it would otherwise start at the next document's text, in its entry's place
    if (blocks.length > start) docStart.set(item.path, start);
  }
  const anchors = new Map<string, number>();
  blocks.forEach((b, i) => {
    for (const id of b.ids) if (!anchors.has(id)) anchors.set(id, i);
  });
  /** the block a link lands on: its anchor's, else its document's first; null outside the spine or without text */
  const position = (t: Target): number | null =>
    (t.fragment ? anchors.get(anchorKey(t.path, t.fragment)) : undefined) ?? docStart.get(t.path) ?? null;
  return { blocks, position };
}

function toOutline(toc: TocEntry[], position: (t: Target) => number | null): OutlineNode[] {
  return toc.map((e) => ({
    title: e.title,
    at: e.target ? position(e.target) : null,
    children: toOutline(e.children, position),
  }));
}
