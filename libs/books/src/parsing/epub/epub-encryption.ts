import { BookRejectedError } from '../../book.errors';
import { ZipArchive } from '../archive/zip-archive';
import { attrOf, elementsNamed, parseXml } from '../markup/xml-tree';

/** Font obfuscation (IDPF, Adobe): fonts scrambled against extraction, not DRM; the text reads. */
const FONT_OBFUSCATION = new Set(['http://www.idpf.org/2008/embedding', 'http://ns.adobe.com/pdf/enc#rc']);
/** Resources a reader of the text can do without. */
const NOT_TEXT = /\.(otf|ttf|woff2?|jpe?g|png|gif|webp|svg|mp3|mp4|m4a|ogg|webm)$/i;

/**
 * Refuses a DRM-protected EPUB (`book_encrypted`): META-INF/encryption.xml lists content encrypted
 * with a key the reader's software holds (Adobe ADEPT, Readium LCP, Apple FairPlay), so the text
 * cannot be read here. Encrypted fonts or images alone (font obfuscation) are no obstacle.
 */
export async function assertNotEncrypted(zip: ZipArchive): Promise<void> {
  const name = zip.find('META-INF/encryption.xml');
  if (!name) return;
  const encrypted = elementsNamed(parseXml(await zip.readXml(name)), 'encrypteddata').flatMap((data) => {
    const method = elementsNamed(data, 'encryptionmethod')[0];
    const reference = elementsNamed(data, 'cipherreference')[0];
    const algorithm = ((method && attrOf(method, 'algorithm')) ?? '').toLowerCase();
    const uri = (reference && attrOf(reference, 'uri')) ?? '';
    return FONT_OBFUSCATION.has(algorithm) || NOT_TEXT.test(uri) ? [] : [uri];
  });
  if (encrypted.length === 0) return;
  throw new BookRejectedError(
    422,
    `the EPUB is encrypted (DRM): ${encrypted.length} of its documents (${encrypted[0]}…) cannot be read without the publisher's key`,
    'book_encrypted',
  );
}
