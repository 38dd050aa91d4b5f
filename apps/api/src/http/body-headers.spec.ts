import fastify from 'fastify';
import { addBodyHeaders } from './body-headers';

describe(addBodyHeaders.name, () => {
  const app = fastify();
  addBodyHeaders(app);
  app.get('/json', async () => ({ ok: true }));
  app.get('/text', async (_req, reply) => reply.type('text/plain; version=0.0.4').send('metrics'));
  app.post('/json', async () => ({ ok: true }));
  afterAll(() => app.close());

  it('gives a body a weak ETag, and a text body its charset, parameters in order', async () => {
    const json = await app.inject({ url: '/json' });
    expect(json.headers.etag).toMatch(/^W\/"b-[A-Za-z0-9+/]{27}"$/);
    expect(json.headers['content-type']).toBe('application/json; charset=utf-8');
    const text = await app.inject({ url: '/text' });
    expect(text.headers['content-type']).toBe('text/plain; charset=utf-8; version=0.0.4');
  });

  it('answers 304 without a body to a GET whose If-None-Match names the ETag, and not to a POST', async () => {
    const { etag } = (await app.inject({ url: '/json' })).headers;
    const again = await app.inject({ url: '/json', headers: { 'if-none-match': String(etag) } });
    expect(again.statusCode).toBe(304);
    expect(again.body).toBe('');
    expect(again.headers['content-type']).toBeUndefined();
    expect((await app.inject({ url: '/json', headers: { 'if-none-match': 'W/"other"' } })).statusCode).toBe(200);
    const post = await app.inject({ method: 'POST', url: '/json', headers: { 'if-none-match': '*' } });
    expect(post.statusCode).toBe(200);
  });
});
