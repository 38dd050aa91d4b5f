import type { Readable } from 'node:stream';
import { fromBuffer, getFileNameLowLevel, validateFileName, type Entry, type ZipFile } from 'yauzl';
import { BookRejectedError } from '../../book.errors';
import { assertNoEntityDeclarations } from './xml-guard';

/** More entries than any book needs (an illustrated EPUB has a few thousand at most). */
export const ZIP_MAX_ENTRIES = 10_000;
/** An entry may inflate at most this many times its compressed size (text deflates 3–20×, a bomb ~1000×)… */
export const ZIP_MAX_ENTRY_RATIO = 100;
/** …once it is larger than this: a small entry cannot be a bomb, and tiny XML parts compress oddly well. */
export const ZIP_RATIO_FROM_BYTES = 1024 * 1024;

export const zipBomb = (why: string) =>
  new BookRejectedError(422, `the archive is a decompression bomb: ${why}`, 'book_zip_bomb');

const unsafePath = (why: string) =>
  new BookRejectedError(422, `the archive holds an entry outside itself (${why})`, 'book_zip_unsafe_path');

const notAZip = (why: string) =>
  new BookRejectedError(422, `the file is not a readable zip archive: ${why}`, 'book_parse_failed');

const encryptedEntry = (name: string) =>
  new BookRejectedError(422, `the archive's entry ${name} is encrypted`, 'book_encrypted');

/**
 * A zip (an EPUB or a DOCX) read from memory with yauzl, refusing bombs before they inflate: the
 * central directory is read first, and an archive with too many entries, entries declaring more
 * than the upload may expand to (all together), or one entry inflating past ZIP_MAX_ENTRY_RATIO,
 * is refused without inflating a byte; an entry whose name leaves the archive (`../`, absolute,
 * a drive letter or a backslash) too. Entries are then inflated one at a time on request, each
 * stopped at its declared size (yauzl checks it: a lying central directory is caught while
 * inflating) and all of them together at `maxExpandedBytes`.
 */
export class ZipArchive {
  private inflated = 0;
  private readonly inflatedNames = new Set<string>();
  private readonly byLowerName: Map<string, string>;

  private constructor(
    private readonly zip: ZipFile,
    private readonly entries: Map<string, Entry>,
    private readonly maxExpandedBytes: number,
  ) {
    this.byLowerName = new Map([...entries.keys()].map((n) => [n.toLowerCase(), n]));
  }

  static async open(bytes: Buffer, maxExpandedBytes: number): Promise<ZipArchive> {
    const zip = await new Promise<ZipFile>((resolve, reject) =>
      fromBuffer(
        bytes,
        { lazyEntries: true, decodeStrings: false, validateEntrySizes: true, autoClose: false },
        (err, z) => (err ? reject(notAZip(err.message)) : resolve(z)),
      ),
    );
    if (zip.entryCount > ZIP_MAX_ENTRIES) {
      zip.close();
      throw zipBomb(`${zip.entryCount} entries, more than the ${ZIP_MAX_ENTRIES} allowed`);
    }
    const entries = await readDirectory(zip, maxExpandedBytes).catch((e: unknown) => {
      zip.close();
      throw e;
    });
    return new ZipArchive(zip, entries, maxExpandedBytes);
  }

  /** The entry's name as stored, matching case-insensitively when the exact name is missing (sloppy EPUBs). */
  find(name: string): string | null {
    if (this.entries.has(name)) return name;
    return this.byLowerName.get(name.toLowerCase()) ?? null;
  }

  names(): string[] {
    return [...this.entries.keys()];
  }

  /** The entries not inflated yet. */
  unread(): string[] {
    return this.names().filter((n) => !this.inflatedNames.has(n));
  }

  /** Whether an entry is encrypted at the zip level (traditional or strong zip encryption). */
  isEncrypted(name: string): boolean {
    const e = this.entries.get(name);
    return !!e && (e.generalPurposeBitFlag & 0x1) !== 0;
  }

  /** An entry's bytes, inflated under the bounds. */
  async read(name: string): Promise<Buffer> {
    const chunks: Buffer[] = [];
    await this.inflate(name, (c) => chunks.push(c));
    return Buffer.concat(chunks);
  }

  /** An entry as text: UTF-8 (or UTF-16 with a byte-order mark), invalid bytes replaced. */
  async readText(name: string): Promise<string> {
    return decodeXmlText(await this.read(name));
  }

  /** An XML (or XHTML) entry as text, refused when it declares entities (billion laughs, external entities). */
  async readXml(name: string): Promise<string> {
    const text = await this.readText(name);
    assertNoEntityDeclarations(text, name);
    return text;
  }

  /** Inflates an entry counting its bytes, keeping none: a library reading the archive again then meets no bomb in it. */
  async count(name: string): Promise<void> {
    await this.inflate(name, () => undefined);
  }

  close(): void {
    this.zip.close();
  }

  private async inflate(name: string, onChunk: (c: Buffer) => void): Promise<void> {
    const entry = this.entries.get(name);
    if (!entry) throw notAZip(`no entry ${name}`);
    this.inflatedNames.add(name);
    if (this.isEncrypted(name)) throw encryptedEntry(name);
    const stream = await new Promise<Readable>((resolve, reject) =>
      this.zip.openReadStream(entry, (err, s) => (err ? reject(readError(err, name)) : resolve(s))),
    );
    await new Promise<void>((resolve, reject) => {
      const fail = (e: Error) => {
        stream.destroy();
        reject(e);
      };
      stream.on('data', (c: Buffer) => {
        this.inflated += c.length;
        if (this.inflated > this.maxExpandedBytes)
          return fail(zipBomb(`its entries inflate to more than ${mb(this.maxExpandedBytes)} MB`));
        onChunk(c);
      });
      stream.once('error', (e: Error) => fail(readError(e, name)));
      stream.once('end', () => resolve());
    });
  }
}

/** Reads the central directory: names checked, sizes and ratios checked, nothing inflated. */
function readDirectory(zip: ZipFile, maxExpandedBytes: number): Promise<Map<string, Entry>> {
  return new Promise((resolve, reject) => {
    const entries = new Map<string, Entry>();
    let declared = 0;
    const stop = (e: Error) => {
      zip.removeAllListeners();
      reject(e);
    };
    zip.on('entry', (entry: Entry) => {
      const name = getFileNameLowLevel(
        entry.generalPurposeBitFlag,
        entry.fileNameRaw,
        entry.extraFields,
        true, // keep backslashes, so `..\\x` is refused rather than read as a name
      );
      const unsafe = validateFileName(name);
      if (unsafe) return stop(unsafePath(unsafe));
      declared += entry.uncompressedSize;
      if (declared > maxExpandedBytes)
        return stop(zipBomb(`its entries declare more than ${mb(maxExpandedBytes)} MB inflated`));
      const ratio = entry.uncompressedSize / Math.max(1, entry.compressedSize);
      if (entry.uncompressedSize > ZIP_RATIO_FROM_BYTES && ratio > ZIP_MAX_ENTRY_RATIO)
        return stop(zipBomb(`${name} inflates ${Math.round(ratio)} times, more than ${ZIP_MAX_ENTRY_RATIO}`));
      if (!name.endsWith('/') && !entries.has(name)) entries.set(name, entry);
      zip.readEntry();
    });
    zip.once('end', () => resolve(entries));
    zip.once('error', (e: Error) => stop(readError(e, 'the central directory')));
    zip.readEntry();
  });
}

/** yauzl's errors as refusals: sizes past the declared ones are a bomb; encryption is DRM; the rest unreadable. */
function readError(e: Error, name: string): BookRejectedError {
  if (e instanceof BookRejectedError) return e;
  if (/too many bytes/i.test(e.message)) return zipBomb(`${name} inflates past its declared size`);
  if (/encrypt/i.test(e.message)) return encryptedEntry(name);
  return notAZip(`${name}: ${e.message}`);
}

const mb = (bytes: number) => Math.round(bytes / 1024 / 1024);

/** XML's own encodings: a UTF-16 byte-order mark, else UTF-8 (invalid bytes become U+FFFD). */
export function decodeXmlText(bytes: Buffer): string {
  if (bytes[0] === 0xff && bytes[1] === 0xfe) return new TextDecoder('utf-16le').decode(bytes.subarray(2));
  if (bytes[0] === 0xfe && bytes[1] === 0xff) return new TextDecoder('utf-16be').decode(bytes.subarray(2));
  return new TextDecoder('utf-8').decode(bytes); // strips a UTF-8 byte-order mark
}
