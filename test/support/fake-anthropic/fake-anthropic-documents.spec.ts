import Anthropic from '@anthropic-ai/sdk';
import { FakeAnthropic } from './fake-anthropic.server';

const MODEL = 'claude-test';

/** A custom content document: one text block per passage, citations enabled. */
const chapter = (title: string, passages: string[], cache?: Anthropic.CacheControlEphemeral) => ({
  type: 'document' as const,
  source: { type: 'content' as const, content: passages.map((text) => ({ type: 'text' as const, text })) },
  title,
  citations: { enabled: true },
  ...(cache ? { cache_control: cache } : {}),
});

const passages = (chapterNo: number) =>
  Array.from({ length: 20 }, (_, i) => `Chapter ${chapterNo}, passage ${i}: ${'the sea was grey and wide '.repeat(8)}`);

describe('FakeAnthropic documents and citations', () => {
  let fake: FakeAnthropic;
  let sut: Anthropic;

  beforeAll(async () => {
    fake = await FakeAnthropic.start();
    sut = new Anthropic({ apiKey: 'sk-fake', baseURL: fake.url, maxRetries: 0 });
  });
  afterEach(() => fake.reset());
  afterAll(() => fake.close());

  const ask = (content: Anthropic.ContentBlockParam[]): Anthropic.MessageCreateParamsNonStreaming => ({
    model: MODEL,
    max_tokens: 256,
    messages: [{ role: 'user', content }],
  });

  async function rejected(params: Anthropic.MessageCreateParamsNonStreaming): Promise<string> {
    await expect(sut.messages.create(params)).rejects.toBeInstanceOf(Anthropic.BadRequestError);
    return fake.rejected[fake.rejected.length - 1].message;
  }

  it('streams the citations a reply makes of custom content as content_block_location, which the SDK accumulates', async () => {
    const doc = chapter('Moby-Dick', ['Call me Ishmael.', 'Some years ago, never mind how long precisely.']);
    fake.enqueue({
      content: [
        { type: 'text', text: 'The narrator names himself: ' },
        { type: 'text', text: 'Ishmael.', cite: [{ document: 0, start: 0 }] },
      ],
    });

    const cited: unknown[] = [];
    const stream = sut.messages.stream(ask([doc, { type: 'text', text: 'Who narrates?' }]));
    stream.on('citation', (c) => cited.push(c));
    const message = await stream.finalMessage();

    const citation = {
      type: 'content_block_location',
      cited_text: 'Call me Ishmael.',
      document_index: 0,
      document_title: 'Moby-Dick',
      start_block_index: 0,
      end_block_index: 1,
      file_id: null,
    };
    expect(message.content).toEqual([
      { type: 'text', text: 'The narrator names himself: ' },
      { type: 'text', text: 'Ishmael.', citations: [citation] },
    ]);
    expect(cited).toEqual([citation]);
  });

  it('numbers documents over the whole request and cites plain text by characters', async () => {
    const plain = {
      type: 'document' as const,
      source: {
        type: 'text' as const,
        media_type: 'text/plain' as const,
        data: 'The grass is green. The sky is blue.',
      },
      title: 'Colours',
      citations: { enabled: true },
    };
    fake.enqueue({ content: [{ type: 'text', text: 'Blue.', cite: [{ document: 1, start: 20, end: 36 }] }] });

    const message = await sut.messages.create(
      ask([chapter('A', ['one']), plain, { type: 'text', text: 'What colour is the sky?' }]),
    );

    expect((message.content[0] as Anthropic.TextBlock).citations).toEqual([
      expect.objectContaining({ type: 'char_location', cited_text: 'The sky is blue.', document_index: 1 }),
    ]);
  });

  it('answers a document unscripted by citing the passage closest to the question', async () => {
    const doc = chapter('Alice', ['Alice fell down the rabbit hole.', 'The Queen of Hearts shouted at everyone.']);
    const message = await sut.messages.create(ask([doc, { type: 'text', text: 'Who shouted at everyone?' }]));
    const cited = message.content.flatMap((b) => (b.type === 'text' ? (b.citations ?? []) : []));
    expect(cited).toEqual([
      expect.objectContaining({ type: 'content_block_location', start_block_index: 1, end_block_index: 2 }),
    ]);
  });

  it('refuses what the real API refuses: citations on some documents only, blank passages, a bad source', async () => {
    const off = { ...chapter('B', ['two']), citations: { enabled: false } };
    expect(await rejected(ask([chapter('A', ['one']), off, { type: 'text', text: 'q' }]))).toMatch(
      /enabled for all documents or for none/,
    );
    expect(await rejected(ask([chapter('A', ['one', '  ']), { type: 'text', text: 'q' }]))).toMatch(/non-whitespace/);
    const badSource = { type: 'document', source: { type: 'html', data: '<p>' } } as never;
    expect(await rejected(ask([badSource, { type: 'text', text: 'q' }]))).toMatch(
      /does not match any of the expected tags/,
    );
  });

  it('counts breakpoints on documents within the 4 allowed, and wants 1-hour entries before 5-minute ones', async () => {
    const cc = { type: 'ephemeral' as const };
    const five = [1, 2, 3, 4, 5].map((n) => chapter(`C${n}`, ['x'], cc));
    expect(await rejected(ask([...five, { type: 'text', text: 'q' }]))).toMatch(
      /maximum of 4 blocks with cache_control/,
    );
    const order = [chapter('A', ['one'], cc), chapter('B', ['two'], { type: 'ephemeral', ttl: '1h' })];
    expect(await rejected(ask([...order, { type: 'text', text: 'q' }]))).toMatch(/ttl '1h' may not come after/);
  });

  it('reads the earlier chapters from the cache when a request adds a chapter after them, and says what lives an hour', async () => {
    const hour = { type: 'ephemeral' as const, ttl: '1h' as const };
    const upTo = (n: number) =>
      Array.from({ length: n }, (_, i) => chapter('Sea', passages(i + 1), i === n - 1 ? hour : undefined));

    const first = await sut.messages.create(ask([...upTo(5), { type: 'text', text: 'q' }]));
    const moved = await sut.messages.create(ask([...upTo(6), { type: 'text', text: 'q' }]));

    expect(first.usage.cache_read_input_tokens).toBe(0);
    expect(first.usage.cache_creation?.ephemeral_1h_input_tokens).toBe(first.usage.cache_creation_input_tokens);
    // chapters 1-5 come from the cache; chapter 6 is written
    expect(moved.usage.cache_read_input_tokens).toBe(first.usage.cache_creation_input_tokens);
    expect(moved.usage.cache_creation_input_tokens! / moved.usage.cache_read_input_tokens!).toBeLessThan(0.25);
  });
});
