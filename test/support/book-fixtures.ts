/**
 * Books as publishers hold them, built here in code so the tests need no book files: EPUB 3 (nav,
 * landmarks), EPUB 2 (NCX, guide), one HTML file and a Word .docx, each with nested sections,
 * footnotes and an image with alt text; and hostile archives (zip bombs, paths leaving the
 * archive, entity expansion, external entities, DRM). Each honest book holds findable facts,
 * listed beside it for the tests.
 */
import { ZipFile } from 'yazl';

export interface ZipPart {
  name: string;
  data: string | Buffer;
  /** stored, not deflated (an EPUB's `mimetype` must be) */
  store?: boolean;
}

const MTIME = new Date(Date.UTC(2026, 0, 1));

/** A zip of the parts, in order. */
export function zipOf(parts: ZipPart[]): Promise<Buffer> {
  const zip = new ZipFile();
  for (const p of parts) {
    zip.addBuffer(typeof p.data === 'string' ? Buffer.from(p.data, 'utf8') : p.data, p.name, {
      compress: !p.store,
      mtime: MTIME,
    });
  }
  zip.end();
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    zip.outputStream.on('data', (c: Buffer) => chunks.push(c));
    zip.outputStream.on('error', reject);
    zip.outputStream.on('end', () => resolve(Buffer.concat(chunks)));
  });
}

/** The central directory's records of a zip: where each entry's name and sizes are. */
function centralRecords(zip: Buffer): { name: string; at: number }[] {
  const eocd = zip.lastIndexOf(Buffer.from([0x50, 0x4b, 0x05, 0x06]));
  const count = zip.readUInt16LE(eocd + 10);
  let at = zip.readUInt32LE(eocd + 16);
  const out: { name: string; at: number }[] = [];
  for (let i = 0; i < count; i++) {
    const nameLength = zip.readUInt16LE(at + 28);
    out.push({ name: zip.toString('utf8', at + 46, at + 46 + nameLength), at });
    at += 46 + nameLength + zip.readUInt16LE(at + 30) + zip.readUInt16LE(at + 32);
  }
  return out;
}

/** Makes the central directory declare `bytes` as the inflated size of `name` (a lie a bomb tells). */
export function declareSize(zip: Buffer, name: string, bytes: number): Buffer {
  const out = Buffer.from(zip);
  const record = centralRecords(out).find((r) => r.name === name);
  if (!record) throw new Error(`no entry ${name}`);
  out.writeUInt32LE(bytes, record.at + 24);
  return out;
}

/** Renames entries byte for byte (same length): zip writers refuse `../` names, so they are put in after. */
export function renameEntry(zip: Buffer, from: string, to: string): Buffer {
  if (Buffer.byteLength(from) !== Buffer.byteLength(to)) throw new Error('names must have the same length');
  const out = Buffer.from(zip);
  const needle = Buffer.from(from);
  for (let at = out.indexOf(needle); at >= 0; at = out.indexOf(needle, at + 1)) out.write(to, at);
  return out;
}

// ---------------------------------------------------------------------------------------------
// EPUB 3
// ---------------------------------------------------------------------------------------------

const XHTML_NS = 'xmlns="http://www.w3.org/1999/xhtml" xmlns:epub="http://www.idpf.org/2007/ops"';

function xhtml(title: string, body: string, bodyType?: string): string {
  return `<?xml version="1.0" encoding="UTF-8"?>
<!DOCTYPE html>
<html ${XHTML_NS} xml:lang="en" lang="en">
<head><title>${title}</title><link rel="stylesheet" type="text/css" href="style.css"/></head>
<body${bodyType ? ` epub:type="${bodyType}"` : ''}>
${body}
</body>
</html>
`;
}

const CONTAINER = `<?xml version="1.0" encoding="UTF-8"?>
<container version="1.0" xmlns="urn:oasis:names:tc:opendocument:xmlns:container">
  <rootfiles><rootfile full-path="OEBPS/content.opf" media-type="application/oebps-package+xml"/></rootfiles>
</container>
`;

/** What the EPUB 3 fixture should come out as, for the tests. */
export const EPUB3_FACTS = {
  title: 'The Cartographer of Saltmarsh',
  author: 'Imogen Thale',
  chapters: [
    { index: 0, title: 'Preface' },
    { index: 1, title: 'Chapter 1: The Map Room' },
    { index: 2, title: 'Chapter 2: The Compass' },
    { index: 3, title: 'Chapter 3: The River' },
  ],
  /** a sentence of each chapter, and the chapter it is in */
  passages: [
    { q: 'vellum chart', chapter: 'Chapter 1: The Map Room', text: 'Ysolde unrolled the vellum chart' },
    {
      q: 'grandfather brass compass',
      chapter: 'Chapter 2: The Compass',
      text: 'always pointed toward the drowned bell tower',
    },
    { q: 'willow crossing ford', chapter: 'Chapter 3: The River', text: 'crossed the ford at the willow crossing' },
  ],
  /** a footnote of chapter 1 (inside the chapter's document) */
  footnote: { q: 'Abelard Finch', chapter: 'Chapter 1: The Map Room', text: 'drawn in 1741 by Abelard Finch' },
  /** an endnote (in the notes document at the back), referenced from chapter 2 */
  endnote: { q: 'Dunwich eroding coast', chapter: 'Chapter 2: The Compass', text: 'eroding coast of Dunwich' },
  /** an image's alt text and a figure caption, in chapter 1 */
  alt: { q: 'compass rose vermilion', chapter: 'Chapter 1: The Map Room', text: 'compass rose drawn in vermilion ink' },
  caption: { q: 'before the great storm', chapter: 'Chapter 1: The Map Room', text: 'The Finch chart of 1741' },
  /** sections of chapter 3 (nested in the nav) */
  sections: ['The Ford', 'The Falls'],
  /** words only the front and back matter hold: they must not be found */
  dropped: ['Quillfeather', 'Marginalia'],
};

const para = (...sentences: string[]) => `<p>${sentences.join(' ')}</p>`;

/** Filler prose, so each chapter has a few passages' worth of text. */
function prose(seed: string, n: number): string {
  const lines: string[] = [];
  for (let i = 0; i < n; i++) {
    lines.push(
      para(
        `The ${seed} went on as the tide turned over the flats, grey and slow, and the gulls argued over the mud.`,
        `Nobody in the village spoke of it at supper, though everyone had seen the lantern moving on the dunes.`,
        `By morning the fog had lifted and the road to the harbour lay open again.`,
      ),
    );
  }
  return lines.join('\n');
}

function epub3Parts(): ZipPart[] {
  const f = EPUB3_FACTS;
  const manifest = [
    ['cover', 'cover.xhtml', 'application/xhtml+xml', ''],
    ['cover-image', 'images/cover.png', 'image/png', 'cover-image'],
    ['map', 'images/map.png', 'image/png', ''],
    ['copyright', 'copyright.xhtml', 'application/xhtml+xml', ''],
    ['nav', 'nav.xhtml', 'application/xhtml+xml', 'nav'],
    ['preface', 'preface.xhtml', 'application/xhtml+xml', ''],
    ['part1', 'part1.xhtml', 'application/xhtml+xml', ''],
    ['ch1', 'text/ch1.xhtml', 'application/xhtml+xml', ''],
    ['ch2', 'text/ch2.xhtml', 'application/xhtml+xml', ''],
    ['part2', 'part2.xhtml', 'application/xhtml+xml', ''],
    ['ch3', 'text/ch3.xhtml', 'application/xhtml+xml', ''],
    ['notes', 'notes.xhtml', 'application/xhtml+xml', ''],
    ['index', 'index.xhtml', 'application/xhtml+xml', ''],
    ['css', 'style.css', 'text/css', ''],
  ];
  const spine = ['cover', 'copyright', 'nav', 'preface', 'part1', 'ch1', 'ch2', 'part2', 'ch3', 'notes', 'index'];
  const opf = `<?xml version="1.0" encoding="UTF-8"?>
<package xmlns="http://www.idpf.org/2007/opf" version="3.0" unique-identifier="uid" xml:lang="en">
  <metadata xmlns:dc="http://purl.org/dc/elements/1.1/">
    <dc:identifier id="uid">urn:uuid:5b1f0d52-8d0e-4c4e-9d55-1b2f1d4f7a10</dc:identifier>
    <dc:title id="t1">${f.title}</dc:title>
    <meta refines="#t1" property="title-type">main</meta>
    <dc:creator id="c1">${f.author}</dc:creator>
    <meta refines="#c1" property="role" scheme="marc:relators">aut</meta>
    <dc:creator id="c2">Oswin Pell</dc:creator>
    <meta refines="#c2" property="role" scheme="marc:relators">ill</meta>
    <dc:language>en</dc:language>
    <meta property="dcterms:modified">2026-01-01T00:00:00Z</meta>
  </metadata>
  <manifest>
${manifest.map(([id, href, type, props]) => `    <item id="${id}" href="${href}" media-type="${type}"${props ? ` properties="${props}"` : ''}/>`).join('\n')}
  </manifest>
  <spine>
${spine.map((id) => `    <itemref idref="${id}"${id === 'cover' ? ' linear="yes"' : ''}/>`).join('\n')}
  </spine>
</package>
`;
  const nav = xhtml(
    'Contents',
    `<nav epub:type="toc" id="toc"><h1>Contents</h1>
  <ol>
    <li><a href="copyright.xhtml">Copyright</a></li>
    <li><a href="preface.xhtml">Preface</a></li>
    <li><a href="part1.xhtml">Part One: The Coast</a>
      <ol>
        <li><a href="text/ch1.xhtml">${f.chapters[1].title}</a></li>
        <li><a href="text/ch2.xhtml#start">${f.chapters[2].title}</a></li>
      </ol>
    </li>
    <li><a href="part2.xhtml">Part Two: The Interior</a>
      <ol>
        <li><a href="text/ch3.xhtml">${f.chapters[3].title}</a>
          <ol>
            <li><a href="text/ch3.xhtml#ford">The Ford</a></li>
            <li><a href="text/ch3.xhtml#falls">The Falls</a></li>
          </ol>
        </li>
      </ol>
    </li>
    <li><a href="notes.xhtml">Notes</a></li>
    <li><a href="index.xhtml">Index</a></li>
  </ol>
</nav>
<nav epub:type="landmarks" hidden="">
  <ol>
    <li><a epub:type="cover" href="cover.xhtml">Cover</a></li>
    <li><a epub:type="toc" href="nav.xhtml#toc">Contents</a></li>
    <li><a epub:type="bodymatter" href="part1.xhtml">Start</a></li>
    <li><a epub:type="index" href="index.xhtml">Index</a></li>
  </ol>
</nav>`,
  );
  return [
    { name: 'mimetype', data: 'application/epub+zip', store: true },
    { name: 'META-INF/container.xml', data: CONTAINER },
    { name: 'OEBPS/content.opf', data: opf },
    { name: 'OEBPS/nav.xhtml', data: nav },
    {
      name: 'OEBPS/cover.xhtml',
      data: xhtml('Cover', '<section epub:type="cover"><img src="images/cover.png" alt="Cover"/></section>'),
    },
    {
      name: 'OEBPS/copyright.xhtml',
      data: xhtml(
        'Copyright',
        `<section epub:type="copyright-page"><p>Copyright 2026 Imogen Thale. All rights reserved. Published by Quillfeather Press.</p>
${prose('Quillfeather small print', 3)}</section>`,
      ),
    },
    {
      name: 'OEBPS/preface.xhtml',
      data: xhtml(
        'Preface',
        `<section epub:type="preface"><h1>Preface</h1>
${para('This account was set down from the letters of the last cartographer of Saltmarsh, who kept them in a sea chest.')}
</section>`,
        'frontmatter',
      ),
    },
    {
      name: 'OEBPS/part1.xhtml',
      data: xhtml('Part One', '<section epub:type="part"><h1>Part One: The Coast</h1></section>', 'bodymatter'),
    },
    {
      name: 'OEBPS/text/ch1.xhtml',
      data: xhtml(
        f.chapters[1].title,
        `<section epub:type="chapter" id="ch1">
<h1>Chapter 1<br/>The Map Room</h1>
${para(`Ysolde unrolled the vellum chart<a epub:type="noteref" href="#fn1">1</a> across the table in the map room, weighting its corners with river stones.`)}
<figure><img src="../images/map.png" alt="A compass rose drawn in vermilion ink"/><figcaption>Figure 1. The Finch chart of 1741, with the coast before the great storm.</figcaption></figure>
${prose('survey of the marsh', 6)}
<aside epub:type="footnote" id="fn1"><p>The Saltmarsh chart was drawn in 1741 by Abelard Finch, the first surveyor of the coast.</p></aside>
</section>`,
      ),
    },
    {
      name: 'OEBPS/text/ch2.xhtml',
      data: xhtml(
        f.chapters[2].title,
        `<section epub:type="chapter"><h1 id="start">Chapter 2: The Compass</h1>
${para('Her grandfather’s brass compass always pointed toward the drowned bell tower<a epub:type="noteref" href="../notes.xhtml#en1">*</a>, never north, and Ysolde trusted it more than the stars.')}
${prose('walk along the shingle', 6)}
</section>`,
      ),
    },
    {
      name: 'OEBPS/part2.xhtml',
      data: xhtml('Part Two', '<section epub:type="part"><h1>Part Two: The Interior</h1></section>', 'bodymatter'),
    },
    {
      name: 'OEBPS/text/ch3.xhtml',
      data: xhtml(
        f.chapters[3].title,
        `<section epub:type="chapter"><h1>Chapter 3: The River</h1>
${para('Inland the country changed: hedges, then orchards, then the long brown river.')}
<section id="ford"><h2>The Ford</h2>
${para('They crossed the ford at the willow crossing while the water was low and the herons watched.')}
${prose('crossing', 4)}
</section>
<section id="falls"><h2>The Falls</h2>
${para('The falls of Carrowmore thundered below the cliff, and the chart ended there.')}
${prose('roar of the water', 4)}
</section>
</section>`,
      ),
    },
    {
      name: 'OEBPS/notes.xhtml',
      data: xhtml(
        'Notes',
        `<section epub:type="endnotes"><h1>Notes</h1>
<ol><li id="en1" epub:type="endnote"><p>Drowned bell towers are common along the eroding coast of Dunwich, where whole parishes fell into the sea. <a href="text/ch2.xhtml#start">↩</a></p></li></ol>
</section>`,
        'backmatter',
      ),
    },
    {
      name: 'OEBPS/index.xhtml',
      data: xhtml(
        'Index',
        `<section epub:type="index"><h1>Index</h1><ul><li>Marginalia, 12</li><li>compass, 4, 9</li><li>Finch, Abelard, 2</li></ul></section>`,
      ),
    },
    { name: 'OEBPS/style.css', data: 'body { font-family: serif; }\n' },
    { name: 'OEBPS/images/cover.png', data: TINY_PNG, store: true },
    { name: 'OEBPS/images/map.png', data: TINY_PNG, store: true },
  ];
}

/** A 1×1 PNG. */
const TINY_PNG = Buffer.from(
  'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg==',
  'base64',
);

/** An EPUB 3: nav with parts and nested sections, landmarks, cover, copyright, preface, notes, index. */
export function epub3Book(): Promise<Buffer> {
  return zipOf(epub3Parts());
}

// ---------------------------------------------------------------------------------------------
// EPUB 2
// ---------------------------------------------------------------------------------------------

const XHTML11_DOCTYPE =
  '<!DOCTYPE html PUBLIC "-//W3C//DTD XHTML 1.1//EN" "http://www.w3.org/TR/xhtml11/DTD/xhtml11.dtd">';

function xhtml11(title: string, body: string): string {
  return `<?xml version="1.0" encoding="utf-8"?>
${XHTML11_DOCTYPE}
<html xmlns="http://www.w3.org/1999/xhtml">
<head><title>${title}</title></head>
<body>
${body}
</body>
</html>
`;
}

export const EPUB2_FACTS = {
  title: 'The Orchard Letters',
  author: 'Hester Vane',
  chapters: [
    { index: 1, title: 'Chapter I. The Orchard' },
    { index: 2, title: 'Chapter II. The Frost' },
    { index: 3, title: 'Chapter III. The Harvest' },
  ],
  passages: [
    { q: 'quince trees', chapter: 'Chapter I. The Orchard', text: 'planted the quince trees' },
    { q: 'frost cellar', chapter: 'Chapter II. The Frost', text: 'the frost reached the cellar' },
    { q: 'cider press', chapter: 'Chapter III. The Harvest', text: 'the old cider press' },
  ],
  /** a note in the notes document, linked EPUB 2 style (no epub:type), from chapter II */
  footnote: { q: 'Worcester Pearmain', chapter: 'Chapter II. The Frost', text: 'Worcester Pearmain' },
  alt: { q: 'ladder against apple tree', chapter: 'Chapter I. The Orchard', text: 'A ladder against an apple tree' },
  dropped: ['Gravesend', 'Colophonic'],
};

function epub2Parts(): ZipPart[] {
  const f = EPUB2_FACTS;
  const docs: [string, string, string][] = [
    ['titlepage', 'titlepage.html', xhtml11('Title', `<h1>${f.title}</h1><p>by ${f.author}</p><p>Gravesend, 1899</p>`)],
    [
      'book1',
      'book1.html',
      xhtml11('Book One', '<h1>Book One</h1><p class="epigraph">Spring, and then the long summer.</p>'),
    ],
    [
      'ch1',
      'ch1.html',
      xhtml11(
        f.chapters[0].title,
        `<h2 id="c1">Chapter I.<br/>The Orchard</h2>
<p>My grandmother planted the quince trees&nbsp;in the spring of the wet year, and wrote to her sister of every one.</p>
<div class="illus"><img src="images/ladder.jpg" alt="A ladder against an apple tree"/></div>
${prose('orchard', 5)}`,
      ),
    ],
    [
      'ch2',
      'ch2.html',
      xhtml11(
        f.chapters[1].title,
        `<h2>Chapter II.<br/>The Frost</h2>
<p>In January the frost reached the cellar<a href="notes.html#n1" id="r1"><sup>1</sup></a> and the apples in the straw went soft.</p>
${prose('winter', 5)}`,
      ),
    ],
    ['book2', 'book2.html', xhtml11('Book Two', '<h1>Book Two</h1>')],
    [
      'ch3',
      'ch3.html',
      xhtml11(
        f.chapters[2].title,
        `<h2>Chapter III.<br/>The Harvest</h2>
<p>They mended the old cider press with a new oak screw, and the whole village came to turn it.</p>
${prose('harvest', 5)}`,
      ),
    ],
    [
      'notes',
      'notes.html',
      xhtml11(
        'Notes',
        `<h2>Notes</h2>
<p id="n1"><a href="ch2.html#r1">1.</a> The Worcester Pearmain keeps badly; the russets lasted until March.</p>`,
      ),
    ],
    ['colophon', 'colophon.html', xhtml11('Colophon', '<p>Set in Colophonic Caslon by the Gravesend Press.</p>')],
  ];
  const opf = `<?xml version="1.0" encoding="UTF-8"?>
<package xmlns="http://www.idpf.org/2007/opf" version="2.0" unique-identifier="BookId">
  <metadata xmlns:dc="http://purl.org/dc/elements/1.1/" xmlns:opf="http://www.idpf.org/2007/opf">
    <dc:title>${f.title}</dc:title>
    <dc:creator opf:role="aut" opf:file-as="Vane, Hester">${f.author}</dc:creator>
    <dc:creator opf:role="edt">Arthur Lisle</dc:creator>
    <dc:language>en</dc:language>
    <dc:identifier id="BookId">urn:isbn:9780000000002</dc:identifier>
  </metadata>
  <manifest>
    <item id="ncx" href="toc.ncx" media-type="application/x-dtbncx+xml"/>
${docs.map(([id, href]) => `    <item id="${id}" href="${href}" media-type="application/xhtml+xml"/>`).join('\n')}
    <item id="ladder" href="images/ladder.jpg" media-type="image/jpeg"/>
  </manifest>
  <spine toc="ncx">
${docs.map(([id]) => `    <itemref idref="${id}"${id === 'notes' ? ' linear="no"' : ''}/>`).join('\n')}
  </spine>
  <guide>
    <reference type="title-page" title="Title Page" href="titlepage.html"/>
    <reference type="text" title="Text" href="book1.html"/>
    <reference type="notes" title="Notes" href="notes.html"/>
    <reference type="colophon" title="Colophon" href="colophon.html"/>
  </guide>
</package>
`;
  let order = 0;
  const point = (label: string, src: string, children = '') =>
    `<navPoint id="np${++order}" playOrder="${order}"><navLabel><text>${label}</text></navLabel><content src="${src}"/>${children}</navPoint>`;
  const ncx = `<?xml version="1.0" encoding="UTF-8"?>
<!DOCTYPE ncx PUBLIC "-//NISO//DTD ncx 2005-1//EN" "http://www.daisy.org/z3986/2005/ncx-2005-1.dtd">
<ncx xmlns="http://www.daisy.org/z3986/2005/ncx/" version="2005-1">
  <head><meta name="dtb:uid" content="urn:isbn:9780000000002"/><meta name="dtb:depth" content="2"/></head>
  <docTitle><text>${f.title}</text></docTitle>
  <navMap>
    ${point('Title Page', 'titlepage.html')}
    ${point('Book One', 'book1.html', point(f.chapters[0].title, 'ch1.html#c1') + point(f.chapters[1].title, 'ch2.html'))}
    ${point('Book Two', 'book2.html', point(f.chapters[2].title, 'ch3.html'))}
    ${point('Colophon', 'colophon.html')}
  </navMap>
</ncx>
`;
  return [
    { name: 'mimetype', data: 'application/epub+zip', store: true },
    { name: 'META-INF/container.xml', data: CONTAINER },
    { name: 'OEBPS/content.opf', data: opf },
    { name: 'OEBPS/toc.ncx', data: ncx },
    ...docs.map(([, href, data]) => ({ name: `OEBPS/${href}`, data })),
    { name: 'OEBPS/images/ladder.jpg', data: TINY_PNG, store: true },
  ];
}

/** An EPUB 2: NCX with books holding chapters, a guide, XHTML 1.1 with `&nbsp;`, notes linked without epub:type. */
export function epub2Book(): Promise<Buffer> {
  return zipOf(epub2Parts());
}

// ---------------------------------------------------------------------------------------------
// HTML
// ---------------------------------------------------------------------------------------------

export const HTML_FACTS = {
  title: 'A Field Guide to Tides',
  author: 'Rowan Ellery',
  chapters: [
    { index: 1, title: 'Spring Tides' },
    { index: 2, title: 'Neap Tides' },
    { index: 3, title: 'Rip Currents' },
  ],
  passages: [
    { q: 'perigee moon', chapter: 'Spring Tides', text: 'the moon at perigee' },
    { q: 'quarter moon neap', chapter: 'Neap Tides', text: 'at the quarter moons' },
    { q: 'swim parallel shore', chapter: 'Rip Currents', text: 'swim parallel to the shore' },
  ],
  footnote: { q: 'Laplace tidal equations', chapter: 'Neap Tides', text: 'Laplace' },
  alt: { q: 'tide table chart', chapter: 'Spring Tides', text: 'A tide table for the Severn estuary' },
  sections: ['The Bore'],
};

/** One HTML file: `h1` the title, `h2` chapters, an `h3` section, a footnote, an image with alt text. */
export function htmlBook(): string {
  const f = HTML_FACTS;
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<title>${f.title}</title>
<meta name="author" content="${f.author}">
<style>body { max-width: 40em }</style>
<script>console.log("not text")</script>
</head>
<body>
<nav><a href="#spring">Spring</a> · <a href="#neap">Neap</a></nav>
<h1>${f.title}</h1>
<h2 id="spring">Spring Tides</h2>
<p>The highest tides come with the moon at perigee and the sun in line with it.</p>
<p><img src="tides.png" alt="A tide table for the Severn estuary"></p>
${prose('spring flood', 4)}
<h3>The Bore</h3>
<p>On the Severn the flood comes in as a single wave, the bore, and surfers wait for it at Minsterworth.</p>
<h2 id="neap">Neap Tides</h2>
<p>The smallest range comes at the quarter moons<sup><a href="#fn-1" id="ref-1">[1]</a></sup>, when sun and moon pull across each other.</p>
${prose('neap ebb', 4)}
<h2>Rip Currents</h2>
<p>If a rip takes you, swim parallel to the shore until you are out of it, then come in.</p>
${prose('current', 4)}
<section role="doc-endnotes"><ol>
<li id="fn-1" role="doc-endnote"><p>The tidal equations are Laplace's, of 1775. <a href="#ref-1" role="doc-backlink">↩</a></p></li>
</ol></section>
</body>
</html>
`;
}

// ---------------------------------------------------------------------------------------------
// DOCX
// ---------------------------------------------------------------------------------------------

export const DOCX_FACTS = {
  title: 'Course Notes: Coastal Geology',
  author: 'Dr. Priya Anand',
  chapters: [
    { index: 1, title: 'Week 1: Cliffs' },
    { index: 2, title: 'Week 2: Beaches' },
    { index: 3, title: 'Week 3: Estuaries' },
  ],
  passages: [
    { q: 'wave cut notch', chapter: 'Week 1: Cliffs', text: 'a wave-cut notch' },
    { q: 'longshore drift', chapter: 'Week 2: Beaches', text: 'longshore drift' },
    { q: 'salt marsh mudflats', chapter: 'Week 3: Estuaries', text: 'salt marsh' },
  ],
  footnote: { q: 'Holderness coast retreat', chapter: 'Week 1: Cliffs', text: 'Holderness' },
  alt: { q: 'stack arch diagram', chapter: 'Week 1: Cliffs', text: 'A diagram of a sea stack and an arch' },
  sections: ['Field trip'],
};

const W = 'xmlns:w="http://schemas.openxmlformats.org/wordprocessingml/2006/main"';
const R = 'xmlns:r="http://schemas.openxmlformats.org/officeDocument/2006/relationships"';

const wText = (t: string) => `<w:r><w:t xml:space="preserve">${t}</w:t></w:r>`;
const wPara = (t: string, style?: string) =>
  `<w:p>${style ? `<w:pPr><w:pStyle w:val="${style}"/></w:pPr>` : ''}${wText(t)}</w:p>`;

/** The XML parts of the DOCX; `documentProlog` goes before `<w:document>` (for hostile variants). */
function docxParts(documentProlog = ''): ZipPart[] {
  const f = DOCX_FACTS;
  const filler = (s: string) =>
    Array.from({ length: 4 }, () =>
      wPara(
        `Students should sketch the ${s} in their notebooks and label each feature. ` +
          'Bring waterproof clothing, since the weather on the headland changes quickly and the path is exposed.',
      ),
    ).join('');
  const image = `<w:p><w:r><w:drawing><wp:inline xmlns:wp="http://schemas.openxmlformats.org/drawingml/2006/wordprocessingDrawing">
<wp:extent cx="952500" cy="952500"/><wp:docPr id="1" name="Picture 1" descr="A diagram of a sea stack and an arch"/>
<a:graphic xmlns:a="http://schemas.openxmlformats.org/drawingml/2006/main"><a:graphicData uri="http://schemas.openxmlformats.org/drawingml/2006/picture">
<pic:pic xmlns:pic="http://schemas.openxmlformats.org/drawingml/2006/picture"><pic:nvPicPr><pic:cNvPr id="0" name="stack.png" descr="A diagram of a sea stack and an arch"/><pic:cNvPicPr/></pic:nvPicPr>
<pic:blipFill><a:blip r:embed="rIdImage"/></pic:blipFill><pic:spPr/></pic:pic></a:graphicData></a:graphic></wp:inline></w:drawing></w:r></w:p>`;
  const document = `<?xml version="1.0" encoding="UTF-8" standalone="yes"?>
${documentProlog}<w:document ${W} ${R}><w:body>
${wPara(f.title, 'Title')}
${wPara('These notes accompany the autumn field course.')}
${wPara(f.chapters[0].title, 'Heading1')}
<w:p><w:r><w:t xml:space="preserve">Where the sea attacks the base of a cliff it cuts a wave-cut notch</w:t></w:r><w:r><w:rPr><w:rStyle w:val="FootnoteReference"/></w:rPr><w:footnoteReference w:id="1"/></w:r><w:r><w:t xml:space="preserve"> and the rock above eventually falls.</w:t></w:r></w:p>
${image}
${filler('cliff profile')}
${wPara(f.sections[0], 'Heading2')}
${wPara('The field trip meets at the lifeboat station at nine.')}
${wPara(f.chapters[1].title, 'Heading1')}
${wPara('Sand moves along the coast by longshore drift, in the direction of the prevailing wind.')}
${filler('groyne')}
${wPara(f.chapters[2].title, 'Heading1')}
${wPara('Where a river meets the sea, mudflats and salt marsh form behind the spit.')}
${filler('estuary')}
<w:sectPr/></w:body></w:document>
`;
  const styles = `<?xml version="1.0" encoding="UTF-8" standalone="yes"?>
<w:styles ${W}>
  <w:style w:type="paragraph" w:default="1" w:styleId="Normal"><w:name w:val="Normal"/></w:style>
  <w:style w:type="paragraph" w:styleId="Title"><w:name w:val="Title"/></w:style>
  <w:style w:type="paragraph" w:styleId="Heading1"><w:name w:val="heading 1"/></w:style>
  <w:style w:type="paragraph" w:styleId="Heading2"><w:name w:val="heading 2"/></w:style>
  <w:style w:type="character" w:styleId="FootnoteReference"><w:name w:val="footnote reference"/></w:style>
</w:styles>
`;
  const footnotes = `<?xml version="1.0" encoding="UTF-8" standalone="yes"?>
<w:footnotes ${W}>
  <w:footnote w:type="separator" w:id="-1"><w:p><w:r><w:separator/></w:r></w:p></w:footnote>
  <w:footnote w:type="continuationSeparator" w:id="0"><w:p><w:r><w:continuationSeparator/></w:r></w:p></w:footnote>
  <w:footnote w:id="1"><w:p>${wText('The Holderness coast retreats by nearly two metres a year.')}</w:p></w:footnote>
</w:footnotes>
`;
  const core = `<?xml version="1.0" encoding="UTF-8" standalone="yes"?>
<cp:coreProperties xmlns:cp="http://schemas.openxmlformats.org/package/2006/metadata/core-properties" xmlns:dc="http://purl.org/dc/elements/1.1/" xmlns:dcterms="http://purl.org/dc/terms/" xmlns:xsi="http://www.w3.org/2001/XMLSchema-instance">
  <dc:title>${f.title}</dc:title>
  <dc:creator>${f.author}</dc:creator>
</cp:coreProperties>
`;
  const rel = (id: string, type: string, target: string) =>
    `<Relationship Id="${id}" Type="http://schemas.openxmlformats.org/officeDocument/2006/relationships/${type}" Target="${target}"/>`;
  return [
    {
      name: '[Content_Types].xml',
      data: `<?xml version="1.0" encoding="UTF-8" standalone="yes"?>
<Types xmlns="http://schemas.openxmlformats.org/package/2006/content-types">
  <Default Extension="rels" ContentType="application/vnd.openxmlformats-package.relationships+xml"/>
  <Default Extension="xml" ContentType="application/xml"/>
  <Default Extension="png" ContentType="image/png"/>
  <Override PartName="/word/document.xml" ContentType="application/vnd.openxmlformats-officedocument.wordprocessingml.document.main+xml"/>
  <Override PartName="/word/styles.xml" ContentType="application/vnd.openxmlformats-officedocument.wordprocessingml.styles+xml"/>
  <Override PartName="/word/footnotes.xml" ContentType="application/vnd.openxmlformats-officedocument.wordprocessingml.footnotes+xml"/>
  <Override PartName="/docProps/core.xml" ContentType="application/vnd.openxmlformats-package.core-properties+xml"/>
</Types>
`,
    },
    {
      name: '_rels/.rels',
      data: `<?xml version="1.0" encoding="UTF-8" standalone="yes"?>
<Relationships xmlns="http://schemas.openxmlformats.org/package/2006/relationships">
  ${rel('rId1', 'officeDocument', 'word/document.xml')}
  <Relationship Id="rId2" Type="http://schemas.openxmlformats.org/package/2006/relationships/metadata/core-properties" Target="docProps/core.xml"/>
</Relationships>
`,
    },
    { name: 'word/document.xml', data: document },
    {
      name: 'word/_rels/document.xml.rels',
      data: `<?xml version="1.0" encoding="UTF-8" standalone="yes"?>
<Relationships xmlns="http://schemas.openxmlformats.org/package/2006/relationships">
  ${rel('rIdStyles', 'styles', 'styles.xml')}
  ${rel('rIdFootnotes', 'footnotes', 'footnotes.xml')}
  ${rel('rIdImage', 'image', 'media/stack.png')}
</Relationships>
`,
    },
    { name: 'word/styles.xml', data: styles },
    { name: 'word/footnotes.xml', data: footnotes },
    { name: 'word/media/stack.png', data: TINY_PNG, store: true },
    { name: 'docProps/core.xml', data: core },
  ];
}

/** A Word document: a Title paragraph, `Heading 1` chapters, a `Heading 2` section, a footnote, an image with alt text. */
export function docxBook(): Promise<Buffer> {
  return zipOf(docxParts());
}

// ---------------------------------------------------------------------------------------------
// Hostile archives
// ---------------------------------------------------------------------------------------------

/** A chapter of `mb` MiB: markup and a sea of spaces, which deflate about 1000:1. */
function hugeChapter(mb: number): Buffer {
  const head = Buffer.from(
    `<?xml version="1.0" encoding="UTF-8"?><html ${XHTML_NS}><head><title>Boom</title></head><body><p>`,
  );
  const tail = Buffer.from('Boom.</p></body></html>');
  return Buffer.concat([head, Buffer.alloc(mb * 1024 * 1024, 0x20), tail]);
}

function withChapter1(data: string | Buffer): ZipPart[] {
  return epub3Parts().map((p) => (p.name === 'OEBPS/text/ch1.xhtml' ? { ...p, data } : p));
}

/** An EPUB whose first chapter inflates to `mb` MiB (and says so in its central directory). */
export function zipBombEpub(mb = 64): Promise<Buffer> {
  return zipOf(withChapter1(hugeChapter(mb)));
}

/** The same bomb, but its central directory claims the chapter is 4 KiB: caught while inflating. */
export async function lyingZipBombEpub(mb = 64): Promise<Buffer> {
  return declareSize(await zipBombEpub(mb), 'OEBPS/text/ch1.xhtml', 4096);
}

/** An EPUB with `n` extra (tiny) entries. */
export function manyEntriesEpub(n = 20_000): Promise<Buffer> {
  const extra = Array.from({ length: n }, (_, i) => ({ name: `OEBPS/junk/${i}.txt`, data: 'x', store: true }));
  return zipOf([...epub3Parts(), ...extra]);
}

/** An EPUB with an entry named `../../evil.xhtml` (or, with `absolute`, `/tmp/evil.xhtml`), in its spine. */
export async function pathTraversalEpub(absolute = false): Promise<Buffer> {
  const placeholder = absolute ? 'tmpx/evil.xhtml' : 'xx/xx/evil.xhtml';
  const hostile = absolute ? '/tmp/evil.xhtml' : '../../evil.xhtml';
  const parts = epub3Parts();
  parts.push({ name: placeholder, data: xhtml('Evil', '<p>Written outside the archive.</p>') });
  return renameEntry(await zipOf(parts), placeholder, hostile);
}

/** "Billion laughs": ten nested entities of ten, a billion `lol`s, in the first chapter. */
export const BILLION_LAUGHS_PROLOG = `<!DOCTYPE html [
  <!ENTITY lol "lol">
${Array.from({ length: 9 }, (_, i) => `  <!ENTITY lol${i + 1} "${`&lol${i || ''};`.repeat(10)}">`).join('\n')}
]>
`;

export function billionLaughsEpub(): Promise<Buffer> {
  const doc = `<?xml version="1.0" encoding="UTF-8"?>
${BILLION_LAUGHS_PROLOG}<html ${XHTML_NS}><head><title>Laughs</title></head><body><p>&lol9;</p></body></html>
`;
  return zipOf(withChapter1(doc));
}

/** The billion laughs in an XML file the book does not use: refused all the same. */
export function billionLaughsUnusedEpub(): Promise<Buffer> {
  return zipOf([
    ...epub3Parts(),
    { name: 'OEBPS/extra/unused.xml', data: `<?xml version="1.0"?>\n${BILLION_LAUGHS_PROLOG}<x>&lol9;</x>\n` },
  ]);
}

/** An external entity (XXE) in the package document: a parser that resolves it reads the server's files. */
export function externalEntityEpub(): Promise<Buffer> {
  return zipOf(
    epub3Parts().map((p) =>
      p.name === 'OEBPS/content.opf' && typeof p.data === 'string'
        ? {
            ...p,
            data: p.data
              .replace('<package', '<!DOCTYPE package [ <!ENTITY xxe SYSTEM "file:///etc/passwd"> ]>\n<package')
              .replace(
                '<dc:language>en</dc:language>',
                '<dc:language>en</dc:language><dc:description>&xxe;</dc:description>',
              ),
          }
        : p,
    ),
  );
}

/** DRM: META-INF/encryption.xml lists the chapters as AES-encrypted, and they are (random bytes). */
export function encryptedEpub(): Promise<Buffer> {
  const encrypted = ['OEBPS/text/ch1.xhtml', 'OEBPS/text/ch2.xhtml', 'OEBPS/text/ch3.xhtml'];
  const encryption = `<?xml version="1.0" encoding="UTF-8"?>
<encryption xmlns="urn:oasis:names:tc:opendocument:xmlns:container" xmlns:enc="http://www.w3.org/2001/04/xmlenc#" xmlns:ds="http://www.w3.org/2000/09/xmldsig#">
${encrypted
  .map(
    (uri) => `  <enc:EncryptedData>
    <enc:EncryptionMethod Algorithm="http://www.w3.org/2001/04/xmlenc#aes128-cbc"/>
    <ds:KeyInfo><ds:RetrievalMethod URI="license.lcpl#/encryption/content_key" Type="http://readium.org/2014/01/lcp#EncryptedContentKey"/></ds:KeyInfo>
    <enc:CipherData><enc:CipherReference URI="${uri}"/></enc:CipherData>
  </enc:EncryptedData>`,
  )
  .join('\n')}
</encryption>
`;
  let seed = 42;
  const noise = (n: number) =>
    Buffer.from(Array.from({ length: n }, () => (seed = (seed * 1103515245 + 12345) % 2 ** 31) & 0xff));
  const parts = epub3Parts().map((p) => (encrypted.includes(p.name) ? { ...p, data: noise(4096) } : p));
  parts.splice(2, 0, { name: 'META-INF/encryption.xml', data: encryption });
  return zipOf(parts);
}

/** An EPUB whose fonts are obfuscated (META-INF/encryption.xml over fonts only): not DRM, reads fine. */
export function obfuscatedFontEpub(): Promise<Buffer> {
  const encryption = `<?xml version="1.0" encoding="UTF-8"?>
<encryption xmlns="urn:oasis:names:tc:opendocument:xmlns:container" xmlns:enc="http://www.w3.org/2001/04/xmlenc#">
  <enc:EncryptedData><enc:EncryptionMethod Algorithm="http://www.idpf.org/2008/embedding"/>
    <enc:CipherData><enc:CipherReference URI="OEBPS/fonts/serif.otf"/></enc:CipherData></enc:EncryptedData>
</encryption>
`;
  const parts = epub3Parts();
  parts.splice(2, 0, { name: 'META-INF/encryption.xml', data: encryption });
  parts.push({ name: 'OEBPS/fonts/serif.otf', data: Buffer.alloc(2048, 7) });
  return zipOf(parts);
}

/** A DOCX whose document part declares the billion laughs. */
export function billionLaughsDocx(): Promise<Buffer> {
  return zipOf(docxParts(BILLION_LAUGHS_PROLOG.replace('html', 'w:document')));
}

/** A DOCX whose document part inflates to `mb` MiB. */
export function zipBombDocx(mb = 64): Promise<Buffer> {
  return zipOf(
    docxParts().map((p) =>
      p.name === 'word/document.xml' && typeof p.data === 'string'
        ? { ...p, data: Buffer.concat([Buffer.from(p.data), Buffer.alloc(mb * 1024 * 1024, 0x20)]) }
        : p,
    ),
  );
}
