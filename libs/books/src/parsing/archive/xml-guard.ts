import { BookRejectedError } from '../../book.errors';

/** An entity declaration naming a file or URL to read: `<!ENTITY x SYSTEM "file:///etc/passwd">`. */
const EXTERNAL_ENTITY = /<!ENTITY\s+(?:%\s*)?[^\s>]+\s+(?:SYSTEM|PUBLIC)\b/i;
const ANY_ENTITY = /<!ENTITY\b/i;

/**
 * Refuses an XML (or HTML) document that declares entities in its DOCTYPE. No parser here
 * expands or fetches them (htmlparser2 reads no DTD; mammoth's xmldom neither), but a book never
 * needs them: the XHTML, NCX and OOXML of real books use a public DOCTYPE at most, which is
 * allowed (it is never fetched). A declaration is what "billion laughs" (entities of entities,
 * a few hundred bytes to gigabytes) and XXE (an external entity reading the server's files)
 * are made of, so the upload is refused as hostile rather than read around.
 */
export function assertNoEntityDeclarations(xml: string, part: string): void {
  if (!ANY_ENTITY.test(xml)) return;
  throw new BookRejectedError(
    422,
    EXTERNAL_ENTITY.test(xml)
      ? `${part} declares an external entity (a file or URL the parser would read)`
      : `${part} declares XML entities (entity expansion: "billion laughs")`,
    'book_xml_entities',
  );
}
