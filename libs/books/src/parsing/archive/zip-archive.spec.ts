import {
  lyingZipBombEpub,
  manyEntriesEpub,
  pathTraversalEpub,
  renameEntry,
  zipBombEpub,
  zipOf,
} from '../../../../../test/support/book-fixtures';
import { ZIP_MAX_ENTRIES, ZipArchive } from './zip-archive';
import { refusalOf } from '../../../../../test/support/book-refusals';

const MiB = 1024 * 1024;

/** Opens the archive and reads every entry, as a parser would. */
async function readAll(bytes: Buffer, bound: number): Promise<number> {
  const zip = await ZipArchive.open(bytes, bound);
  let n = 0;
  try {
    for (const name of zip.names()) n += (await zip.read(name)).length;
  } finally {
    zip.close();
  }
  return n;
}

describe(ZipArchive.name, () => {
  it('reads entries, by exact name or, failing that, by name in any case', async () => {
    const zip = await ZipArchive.open(
      await zipOf([
        { name: 'a/Ch1.xhtml', data: '<p>one</p>' },
        { name: 'b.txt', data: 'two', store: true },
      ]),
      MiB,
    );
    expect(zip.names()).toEqual(['a/Ch1.xhtml', 'b.txt']);
    expect(zip.find('a/ch1.xhtml')).toBe('a/Ch1.xhtml');
    expect(zip.find('missing')).toBeNull();
    expect(await zip.readText('a/Ch1.xhtml')).toBe('<p>one</p>');
    expect((await zip.read('b.txt')).toString()).toBe('two');
    zip.close();
  });

  it('refuses an archive whose entries declare more than the bound, before inflating anything', async () => {
    const bomb = await zipBombEpub(64);
    expect(bomb.length).toBeLessThan(MiB);
    const r = await refusalOf(ZipArchive.open(bomb, bomb.length * 50));
    expect(r).toMatchObject({
      status: 422,
      code: 'book_zip_bomb',
      message: expect.stringMatching(/declare more than/),
    });
  });

  it('refuses one entry inflating more than 100 times its size, even within the bound', async () => {
    const r = await refusalOf(ZipArchive.open(await zipBombEpub(64), 1024 * MiB));
    expect(r).toMatchObject({ code: 'book_zip_bomb', message: expect.stringMatching(/ch1\.xhtml inflates \d+ times/) });
  });

  it('stops an entry that inflates past the size its central directory declares', async () => {
    const r = await refusalOf(readAll(await lyingZipBombEpub(64), 1024 * MiB));
    expect(r).toMatchObject({ code: 'book_zip_bomb', message: expect.stringMatching(/past its declared size/) });
  });

  it('reads an archive up to the bound exactly, and refuses it a byte below', async () => {
    const zip = await zipOf(
      Array.from({ length: 4 }, (_, i) => ({ name: `p${i}.txt`, data: 'lorem ipsum '.repeat(20_000) })),
    );
    await expect(readAll(zip, 4 * 240_000)).resolves.toBe(4 * 240_000);
    expect(await refusalOf(readAll(zip, 4 * 240_000 - 1))).toMatchObject({ code: 'book_zip_bomb' });
  });

  it(`refuses more than ${ZIP_MAX_ENTRIES} entries`, async () => {
    const r = await refusalOf(ZipArchive.open(await manyEntriesEpub(ZIP_MAX_ENTRIES), 1024 * MiB));
    expect(r).toMatchObject({ code: 'book_zip_bomb', message: expect.stringMatching(/entries, more than/) });
  });

  it.each([
    ['a relative path out of the archive', () => pathTraversalEpub(), /\.\.\/\.\.\/evil\.xhtml/],
    ['an absolute path', () => pathTraversalEpub(true), /\/tmp\/evil\.xhtml/],
    [
      'a Windows path',
      async () =>
        renameEntry(await zipOf([{ name: 'x/..x/evil.txt', data: 'x' }]), 'x/..x/evil.txt', '..\\..\\evil.txt'),
      /evil/,
    ],
    [
      'a drive letter',
      async () => renameEntry(await zipOf([{ name: 'xx/evil.txt', data: 'x' }]), 'xx/evil.txt', 'C:/evil.txt'),
      /C:\/evil/,
    ],
  ])('refuses an entry named with %s', async (_, make, name) => {
    const r = await refusalOf(ZipArchive.open(await make(), MiB));
    expect(r).toMatchObject({ status: 422, code: 'book_zip_unsafe_path', message: expect.stringMatching(name) });
  });

  it('refuses an entry encrypted at the zip level as book_encrypted', async () => {
    const zip = await zipOf([{ name: 'secret.xhtml', data: '<p>x</p>' }]);
    // general purpose bit 0: encrypted, in the central directory record
    const at = zip.lastIndexOf(Buffer.from([0x50, 0x4b, 0x01, 0x02]));
    const locked = Buffer.from(zip);
    locked.writeUInt16LE(locked.readUInt16LE(at + 8) | 1, at + 8);
    const archive = await ZipArchive.open(locked, MiB);
    expect(archive.isEncrypted('secret.xhtml')).toBe(true);
    expect(await refusalOf(archive.read('secret.xhtml'))).toMatchObject({ code: 'book_encrypted' });
    archive.close();
  });

  it('refuses what is not a zip, and an XML entry declaring entities', async () => {
    expect(await refusalOf(ZipArchive.open(Buffer.from('PK\u0003\u0004 but not really'), MiB))).toMatchObject({
      status: 422,
      code: 'book_parse_failed',
    });
    const zip = await ZipArchive.open(
      await zipOf([{ name: 'x.xml', data: '<!DOCTYPE x [<!ENTITY a "b">]><x>&a;</x>' }]),
      MiB,
    );
    expect(await refusalOf(zip.readXml('x.xml'))).toMatchObject({ code: 'book_xml_entities' });
    zip.close();
  });
});
