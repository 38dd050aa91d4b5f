/**
 * Generated hostile uploads (and an honest large book), so the tests need no binary fixtures.
 */
import { deflateSync } from 'node:zlib';
import { minimalPdf } from './minimal-pdf';

/**
 * A small valid PDF whose one page content stream is Flate-compressed and inflates to `mb` MB:
 * spaces followed by one line of text (zlib compresses a run of spaces about 1000:1).
 */
export function pdfBomb(mb = 400): Buffer {
  const stream = Buffer.concat([
    Buffer.alloc(mb * 1024 * 1024, 0x20),
    Buffer.from('BT /F1 11 Tf 72 700 Td (Boom) Tj ET'),
  ]);
  const packed = deflateSync(stream, { level: 9 });
  const objects = [
    '<< /Type /Catalog /Pages 2 0 R >>',
    '<< /Type /Pages /Kids [4 0 R] /Count 1 >>',
    '<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>',
    '<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Resources << /Font << /F1 3 0 R >> >> /Contents 5 0 R >>',
  ];
  const parts: Buffer[] = [Buffer.from('%PDF-1.4\n', 'latin1')];
  const offsets: number[] = [];
  let size = parts[0].length;
  const push = (b: Buffer) => {
    parts.push(b);
    size += b.length;
  };
  objects.forEach((o, i) => {
    offsets.push(size);
    push(Buffer.from(`${i + 1} 0 obj\n${o}\nendobj\n`, 'latin1'));
  });
  offsets.push(size);
  push(Buffer.from(`5 0 obj\n<< /Length ${packed.length} /Filter /FlateDecode >>\nstream\n`, 'latin1'));
  push(packed);
  push(Buffer.from('\nendstream\nendobj\n', 'latin1'));
  const xref = size;
  let tail = `xref\n0 6\n0000000000 65535 f \n`;
  for (const o of offsets) tail += `${String(o).padStart(10, '0')} 00000 n \n`;
  tail += `trailer\n<< /Size 6 /Root 1 0 R >>\nstartxref\n${xref}\n%%EOF\n`;
  push(Buffer.from(tail, 'latin1'));
  return Buffer.concat(parts);
}

/** A PDF of `n` pages with nothing on them. */
export function emptyPagesPdf(n: number): Buffer {
  return minimalPdf(Array.from({ length: n }, () => []));
}

/** One line of `mb` MB of words, no newline anywhere. */
export function singleLineText(mb = 20): string {
  const words = 'lorem ipsum dolor sit amet consectetur adipiscing elit sed do eiusmod tempor ';
  return words.repeat(Math.ceil((mb * 1024 * 1024) / words.length)).slice(0, mb * 1024 * 1024);
}

/** Markdown lists nested `depth` deep, each level one item, repeated `times`. */
export function nestedListsMarkdown(depth = 1_000, times = 5): string {
  const block = Array.from({ length: depth }, (_, i) => `${'  '.repeat(i)}- item ${i}`).join('\n');
  return `# Nested\n\n${Array.from({ length: times }, () => block).join('\n\n')}\n`;
}

/**
 * An honest book of about `mb` MB: 60 chapters of made-up sentences from a seeded generator
 * (a large vocabulary, as a real book has).
 */
export function honestBook(mb: number): string {
  let seed = 7;
  const next = () => (seed = (seed * 1_103_515_245 + 12_345) % 2 ** 31);
  const syllables = ['ka', 'lo', 'mi', 'ren', 'tas', 'vo', 'qui', 'bel', 'dor', 'fen', 'gal', 'hu', 'jos', 'nar'];
  const word = () => Array.from({ length: 2 + (next() % 3) }, () => syllables[next() % syllables.length]).join('');
  const sentence = () => {
    const s = Array.from({ length: 8 + (next() % 10) }, word).join(' ');
    return `${s[0].toUpperCase()}${s.slice(1)}.`;
  };
  const chapterBytes = (mb * 1024 * 1024) / 60;
  const chapters: string[] = [];
  for (let c = 1; c <= 60; c++) {
    const paragraphs = [`Chapter ${c}`];
    for (let bytes = 0; bytes < chapterBytes;) {
      const p = Array.from({ length: 5 }, sentence).join(' ');
      paragraphs.push(p);
      bytes += p.length + 2;
    }
    chapters.push(paragraphs.join('\n\n'));
  }
  return chapters.join('\n\n');
}
