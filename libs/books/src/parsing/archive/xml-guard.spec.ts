import { BILLION_LAUGHS_PROLOG } from '../../../../../test/support/book-fixtures';
import { BookRejectedError } from '../../book.errors';
import { assertNoEntityDeclarations } from './xml-guard';

function refusal(xml: string): { code: string; message: string } | null {
  try {
    assertNoEntityDeclarations(xml, 'part.xml');
    return null;
  } catch (e) {
    if (e instanceof BookRejectedError) return { code: e.code, message: e.message };
    throw e;
  }
}

describe(assertNoEntityDeclarations.name, () => {
  it('refuses entity expansion ("billion laughs")', () => {
    expect(refusal(`${BILLION_LAUGHS_PROLOG}<html><p>&lol9;</p></html>`)).toEqual({
      code: 'book_xml_entities',
      message: 'part.xml declares XML entities (entity expansion: "billion laughs")',
    });
  });

  it.each([
    ['a SYSTEM entity', '<!DOCTYPE x [ <!ENTITY xxe SYSTEM "file:///etc/passwd"> ]><x>&xxe;</x>'],
    ['a PUBLIC entity', '<!DOCTYPE x [<!ENTITY e PUBLIC "-//x//EN" "http://example.com/e">]><x>&e;</x>'],
    ['a parameter entity', '<!DOCTYPE x [<!entity % p SYSTEM "http://example.com/evil.dtd"> %p;]><x/>'],
  ])('refuses an external entity: %s', (_, xml) => {
    expect(refusal(xml)).toMatchObject({
      code: 'book_xml_entities',
      message: expect.stringMatching(/external entity/),
    });
  });

  it('lets through public DOCTYPEs (never fetched), named character entities and escaped markup', () => {
    const xhtml11 =
      '<!DOCTYPE html PUBLIC "-//W3C//DTD XHTML 1.1//EN" "http://www.w3.org/TR/xhtml11/DTD/xhtml11.dtd"><html><p>a&nbsp;b &lt;!ENTITY x&gt;</p></html>';
    expect(refusal(xhtml11)).toBeNull();
    expect(refusal('<!DOCTYPE html><html><p>plain</p></html>')).toBeNull();
  });
});
