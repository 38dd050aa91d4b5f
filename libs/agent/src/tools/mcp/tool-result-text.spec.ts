import { remoteInputSchema } from './remote-input-schema';
import { cutToBytes, resultText } from './tool-result-text';

describe(resultText.name, () => {
  it('joins text blocks and names the other kinds of content in a line each', () => {
    const text = resultText(
      {
        content: [
          { type: 'text', text: 'Lisbon: sunny, 24 °C' },
          { type: 'image', data: Buffer.from('12345').toString('base64'), mimeType: 'image/png' },
          { type: 'audio', data: '', mimeType: 'audio/wav' },
          { type: 'resource_link', uri: 'https://x.example/r/1', name: 'the report', mimeType: 'text/csv' },
          { type: 'resource', resource: { uri: 'file:///notes.txt', text: 'a note' } },
          { type: 'resource', resource: { uri: 'file:///a.bin', blob: 'AAAA', mimeType: 'application/zip' } },
        ],
      },
      10_000,
    );
    expect(text.split('\n')).toEqual([
      'Lisbon: sunny, 24 °C',
      '[image: image/png, 5 bytes, not shown]',
      '[audio: audio/wav, 0 bytes, not shown]',
      '[a link to the report: https://x.example/r/1 (text/csv)]',
      '[file:///notes.txt]',
      'a note',
      '[file:///a.bin: application/zip content, not shown]',
    ]);
  });

  it('reads the structured result when no content came, and says when nothing did', () => {
    expect(resultText({ content: [], structuredContent: { temperature: 24 } }, 1000)).toBe('{"temperature":24}');
    expect(resultText({ content: [] }, 1000)).toBe('(the tool answered with no content)');
  });

  it('cuts a long result to the bound with a note, never inside a character', () => {
    const long = 'é'.repeat(40_000); // 2 bytes each
    const cut = resultText({ content: [{ type: 'text', text: long }] }, 32_768);
    expect(Buffer.byteLength(cut, 'utf8')).toBeLessThanOrEqual(32_768);
    expect(cut).toMatch(/^é+\n\[cut: the result was 80000 bytes; the first \d+ are shown\]$/);
    const kept = Number(/first (\d+)/.exec(cut)![1]);
    expect(Buffer.byteLength(cut.split('\n')[0], 'utf8')).toBe(kept);
    expect(cutToBytes('short', 1024)).toBe('short');
  });
});

describe(remoteInputSchema.name, () => {
  it('gives every schema properties and drops $schema, keeping the rest', () => {
    expect(remoteInputSchema({ type: 'object' })).toEqual({ type: 'object', properties: {} });
    expect(
      remoteInputSchema({
        $schema: 'https://json-schema.org/draft/2020-12/schema',
        type: 'object',
        properties: { city: { type: 'string' } },
        required: ['city', 3],
        additionalProperties: false,
      } as never),
    ).toEqual({
      type: 'object',
      properties: { city: { type: 'string' } },
      required: ['city'],
      additionalProperties: false,
    });
  });
});
