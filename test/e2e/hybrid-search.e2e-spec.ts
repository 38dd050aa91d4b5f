import { randomUUID } from 'node:crypto';
import { expectOk } from '../support/api';
import { FakeEmbeddings } from '../support/fake-embeddings/fake-embeddings.server';
import { clientFor, startStack, Stack } from '../support/stack';
import { waitFor } from '../support/wait-for';

const BOOK = [
  '# Chapter 1: The Garden',
  'The queen ordered the gardeners to paint the roses red before the croquet game began.',
  '# Chapter 2: The Kitchen',
  'A grinning cat sat on the kitchen dresser while the cook threw pepper into the soup.',
  '# Chapter 3: The Trial',
  'At the trial the king asked the hatter about the stolen tarts and the witnesses trembled.',
].join('\n\n');

/** The built API and worker with an OpenAI-compatible embeddings server (the fake, over HTTP). */
describe('hybrid search (e2e)', () => {
  let stack: Stack;
  let fake: FakeEmbeddings;

  beforeAll(async () => {
    fake = await FakeEmbeddings.start({ flavour: 'openai', apiKey: 'e2e-key', models: ['fake-embed-1'] });
    stack = await startStack({
      env: {
        AGENT_ENABLED: 'false',
        EMBEDDINGS_PROVIDER: 'openai',
        EMBEDDINGS_BASE_URL: fake.url,
        EMBEDDINGS_API_KEY: 'e2e-key',
        EMBEDDINGS_MODEL: 'fake-embed-1',
        EMBEDDINGS_BATCH_SIZE: '2',
      },
    });
  }, 60_000);
  afterAll(async () => {
    await stack?.stop();
    await fake?.close();
  });

  it('says hybrid in /readyz, embeds an uploaded book in the worker, and fuses in search', async () => {
    const ready = await fetch(`${stack.base}/readyz`);
    expect(ready.status).toBe(200);
    expect(await ready.json()).toMatchObject({ checks: { database: 'ok', redis: 'ok', search: 'hybrid' } });

    const alice = clientFor(stack.base, `h-${randomUUID()}`);
    const book = expectOk(
      await alice.api.POST('/v1/books', { body: { title: 'Wonderland', format: 'markdown', content: BOOK } }),
      202,
    );
    let shown = book;
    await waitFor('the book to be ready', async () => {
      shown = expectOk(await alice.api.GET('/v1/books/{id}', { params: { path: { id: book.id } } }));
      return shown.status === 'ready';
    });
    expect(shown.progress).toMatchObject({ phase: 'done', embeddingsWritten: shown.chunkCount });
    expect(shown.embeddings).toEqual({ status: 'ready', model: 'fake-embed-1' });
    expect(fake.requests.filter((r) => r.input.length > 2)).toEqual([]);
    expect(fake.embedded).toBe(shown.chunkCount);

    const search = expectOk(
      await alice.api.GET('/v1/books/{id}/search', { params: { path: { id: book.id }, query: { q: 'feline' } } }),
    );
    expect(search.items[0].text).toContain('grinning cat');
    expect(search.items.every((h) => h.score >= 0 && h.score <= 1)).toBe(true);
  });
});
