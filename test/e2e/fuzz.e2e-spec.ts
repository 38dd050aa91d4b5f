import { randomUUID } from 'node:crypto';
import fc from 'fast-check';
import { clientFor, Client, startStack, Stack } from '../support/stack';
import { waitForBook } from '../support/factories/books';
import { PROBLEM_CATALOGUE, ProblemCode } from '../../apps/api/src/http/problem-catalogue';

/** Nothing a client sends yields a 5xx: random bodies, headers, ids and queries on every endpoint. */
describe('malformed input (e2e fuzz)', () => {
  let stack: Stack;
  let alice: Client;
  let conversationId: string;

  beforeAll(async () => {
    stack = await startStack({
      apis: 1,
      workers: 1,
      env: { AGENT_ENABLED: 'false', PROJECTIONS_ENABLED: 'false', DISPATCHER_ENABLED: 'false' },
    }); // a worker that only ingests books
    alice = clientFor(stack.base, `fuzz-${randomUUID()}`);
    conversationId = (await alice.req('POST', '/v1/conversations', { title: 'fuzz' })).body.id;
  }, 60_000);
  afterAll(() => stack?.stop());

  const printable = fc.string({
    unit: fc.constantFrom(...' !"#$%&\'()*+,-./0123456789:;<=>?@ABCZabcz[\\]^_`{|}~é'.split('')),
    maxLength: 40,
  });
  const idLike = fc.oneof(
    fc.constant(randomUUID()),
    fc.constant('not-a-uuid'),
    fc.constant('00000000-0000-0000-0000-000000000000'),
    printable.map(encodeURIComponent),
  );
  const body = fc.oneof(
    fc.jsonValue({ maxDepth: 3 }).map((v) => JSON.stringify(v)),
    fc
      .record(
        {
          content: fc.oneof(fc.string(), fc.integer(), fc.constant(null), fc.array(fc.string())),
          selectedText: fc.option(fc.oneof(fc.string(), fc.boolean())),
          title: fc.option(fc.oneof(fc.string({ maxLength: 300 }), fc.integer())),
          readingPosition: fc.option(fc.oneof(fc.integer(), fc.double(), fc.string())),
          bookId: fc.option(fc.oneof(fc.uuid(), fc.string())),
          version: fc.option(fc.oneof(fc.integer(), fc.string(), fc.double())),
          format: fc.option(fc.string()),
        },
        { requiredKeys: [] },
      )
      .map((v) => JSON.stringify(v)),
    printable,
    fc.constant('{"content":'),
    fc.constant('[]'),
    fc.constant('null'),
  );
  const headers = fc.record(
    {
      'if-match': printable,
      'idempotency-key': printable,
      'last-event-id': printable,
      'content-type': fc.constantFrom(
        'application/json',
        'text/plain',
        'application/x-www-form-urlencoded',
        'multipart/form-data; boundary=x',
        'application/json; charset=latin1',
      ),
    },
    { requiredKeys: [] },
  );
  const cursorOf = (v: unknown) => Buffer.from(JSON.stringify(v)).toString('base64url');
  /** well-formed base64url JSON, as the API's cursors are, holding anything */
  const craftedCursor = fc
    .oneof(
      fc.jsonValue({ maxDepth: 2 }),
      fc.tuple(
        fc.oneof(
          fc.date({ noInvalidDate: true }).map((d) => d.toISOString()),
          printable,
          fc.integer(),
        ),
        fc.oneof(fc.uuid(), printable),
      ),
      fc.oneof(fc.integer(), fc.double(), fc.constant(1e300)),
    )
    .map(cursorOf);
  const query = fc.dictionary(
    fc.constantFrom('limit', 'cursor', 'after', 'version', 'bookId', 'multitask', 'q', 'k', 'access_token'),
    fc.oneof(printable, craftedCursor),
    { maxKeys: 3 },
  );
  const route = (id: string, other: string): Array<[string, string]> => [
    ['POST', '/v1/conversations'],
    ['GET', '/v1/conversations'],
    ['GET', `/v1/conversations/${id}`],
    ['PATCH', `/v1/conversations/${id}`],
    ['DELETE', `/v1/conversations/${other}`],
    ['POST', `/v1/conversations/${id}/messages`],
    ['GET', `/v1/conversations/${id}/messages`],
    ['GET', `/v1/conversations/${id}/events`],
    ['POST', `/v1/conversations/${id}/turns/${other}/cancel`],
    ['POST', `/v1/conversations/${id}/fork`],
    ['POST', '/v1/books'],
    ['GET', '/v1/books'],
    ['GET', `/v1/books/${id}`],
    ['GET', `/v1/books/${id}/search`],
    ['DELETE', `/v1/books/${other}`],
  ];

  it('refuses NUL characters, which Postgres cannot store, with a 400 and stores nothing', async () => {
    const cases: Array<[string, string, unknown]> = [
      ['POST', `/v1/conversations/${conversationId}/messages`, { content: 'a\u0000b' }],
      ['POST', `/v1/conversations/${conversationId}/messages`, { content: 'ok', selectedText: '\u0000' }],
      ['PATCH', `/v1/conversations/${conversationId}`, { title: 'x\u0000' }],
      ['POST', '/v1/conversations', { title: '\u0000' }],
      ['POST', '/v1/books', { title: 'a\u0000b', format: 'text', content: 'Some words.' }],
      ['POST', '/v1/books', { title: 'Null content', format: 'pdf', content: null }],
      ['POST', '/v1/books', { title: 'Spaces', format: 'pdf', content: ' '.repeat(200_000) + '!' }],
    ];
    for (const [method, p, body] of cases) {
      const r = await alice.req(method, p, body);
      expect([p, r.status]).toEqual([p, 400]);
    }
    const book = await alice.req('POST', '/v1/books', {
      title: 'Tiny',
      format: 'text',
      content: 'Chapter 1\n\nA cat sat.',
    });
    await waitForBook(alice, book.body.id);
    expect(
      (await alice.req('GET', `/v1/books/${book.body.id}/search?q=${encodeURIComponent('cat\u0000sat')}`)).status,
    ).toBe(200);
    const events = (await alice.req('GET', `/v1/conversations/${conversationId}/events`)).body.items;
    expect(events.map((e: any) => e.type)).toEqual(['ConversationStarted']);
  });

  it('answers 400 to a well-formed cursor that holds no valid position, on every paged list', async () => {
    const uuid = randomUUID();
    const at = '2020-01-01T00:00:00.000000Z';
    const activity = [
      ['1', uuid], // Date.parse takes it, Postgres does not
      ['2020-02-30T00:00:00.000000Z', uuid],
      ['0000-01-01T00:00:00.000000Z', uuid],
      ['+275760-09-13T00:00:00.000Z', uuid],
      [at, '-'.repeat(36)],
      [at, 'not-a-uuid'],
      [at, 1],
      { at, id: uuid },
    ];
    const version = [1e300, 2 ** 31, -1, 1.5, '7', null, [1]];
    const cases = [
      ...activity.map((c) => `/v1/conversations?cursor=${cursorOf(c)}`),
      // the books page's key is the same kind of instant (the crafted cursors below found its 500)
      ...[...activity, ['-148256-06-10T17:47:15.802Z', uuid]].map((c) => `/v1/books?cursor=${cursorOf(c)}`),
      ...version.map((c) => `/v1/conversations/${conversationId}/messages?cursor=${cursorOf(c)}`),
    ];
    const answers = await Promise.all(cases.map(async (p) => [p, (await alice.req('GET', p)).body]));
    expect(answers).toEqual(
      cases.map((p) => [
        p,
        expect.objectContaining({
          code: 'validation_failed',
          errors: [{ field: 'cursor', message: expect.stringMatching(/^cursor is not valid/) }],
          statusCode: 400,
          message: [expect.stringMatching(/^cursor is not valid/)],
        }),
      ]),
    );
  });

  it('answers 200 or 400 to 300 crafted cursors on the paged lists, never 5xx', async () => {
    const lists = ['/v1/conversations', `/v1/conversations/${conversationId}/messages`, '/v1/books'];
    const fivexx: string[] = [];
    await fc.assert(
      fc.asyncProperty(fc.constantFrom(...lists), craftedCursor, async (list, cursor) => {
        const r = await alice.req('GET', `${list}?cursor=${cursor}`);
        if (![200, 400].includes(r.status)) fivexx.push(`${list} ${Buffer.from(cursor, 'base64url')} → ${r.status}`);
      }),
      { numRuns: 300 },
    );
    expect(fivexx).toEqual([]);
  }, 60_000);

  it('answers every one of 600 malformed requests with a JSON 4xx or a 2xx, never 5xx', async () => {
    const fivexx: string[] = [];
    await fc.assert(
      fc.asyncProperty(
        fc.nat(14),
        fc.boolean(),
        idLike,
        idLike,
        body,
        headers,
        query,
        async (which, realId, id, other, b, h, q) => {
          const [method, path] = route(realId ? conversationId : id, other)[which];
          const qs = new URLSearchParams(q).toString();
          const r = await fetch(`${stack.base}${path}${qs ? `?${qs}` : ''}`, {
            method,
            headers: { ...alice.auth, ...h },
            body: method === 'GET' || method === 'DELETE' ? undefined : b,
            signal: AbortSignal.timeout(5_000),
          }).catch((e: Error) => ({ status: 599, text: async () => e.message, headers: new Headers() }));
          const text = await r.text();
          if (r.status >= 500)
            fivexx.push(
              `${method} ${path}?${qs} ${JSON.stringify(h)} ${b.slice(0, 80)} → ${r.status} ${text.slice(0, 120)}`,
            );
          if (r.status >= 400 && r.status < 500 && !path.endsWith('/stream')) {
            // every client mistake is a problem with a catalogued code (docs/errors.md)
            expect(r.headers.get('content-type')).toMatch(/^application\/problem\+json/);
            const json = JSON.parse(text);
            expect(json).toEqual(
              expect.objectContaining({
                type: `/problems/${json.code}`,
                status: r.status,
                code: expect.any(String),
                detail: expect.any(String),
                statusCode: r.status,
                error: expect.any(String),
                message: expect.anything(),
              }),
            );
            expect(PROBLEM_CATALOGUE[json.code as ProblemCode]?.status).toBe(r.status);
          }
        },
      ),
      { numRuns: 600 },
    );
    expect(fivexx).toEqual([]);
  }, 120_000);
});
