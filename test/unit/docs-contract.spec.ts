import { readFileSync } from 'node:fs';
import path from 'node:path';
import { CONVERSATION_EVENT_TYPES } from '@parley/conversation';
import { ENV_VARIABLES } from '../../libs/config/src/env';
import { PROBLEM_CATALOGUE } from '../../apps/api/src/http/problem-catalogue';

/**
 * Docs that cannot drift (issue 40): the routes and statuses of docs/api.md, the event types of
 * docs/events.md, the problem codes of docs/errors.md and the variables of docs/configuration.md
 * are checked against the code both ways. Each checker returns the disagreements in words; the
 * planted-drift cases show that each one notices a wrong line.
 */

const ROOT = path.join(__dirname, '../..');
const read = (file: string) => readFileSync(path.join(ROOT, file), 'utf8');

type OpenApi = { paths: Record<string, Record<string, { responses: Record<string, unknown> }>> };
type Catalogue = Record<string, { status: number }>;

/** The rows of every Markdown table in `md` whose header's first cell is `firstHeader`, as cells. */
export function tableRows(md: string, firstHeader: string): string[][] {
  const rows: string[][] = [];
  let inTable = false;
  for (const line of md.split('\n')) {
    if (!line.startsWith('|')) {
      inTable = false;
      continue;
    }
    const cells = line
      .slice(1, line.trimEnd().endsWith('|') ? line.trimEnd().length - 1 : undefined)
      .split(/(?<!\\)\|/)
      .map((c) => c.trim());
    if (/^-+$/.test(cells[0])) continue;
    if (!inTable && cells[0] === firstHeader) {
      inTable = true;
      continue;
    }
    if (inTable) rows.push(cells);
  }
  return rows;
}

const codeSpans = (text: string) => [...text.matchAll(/`([^`]+)`/g)].map((m) => m[1]);
const ROUTE = /^(GET|POST|PUT|PATCH|DELETE) (\/[^\s?]*)/;
/** `/v1/books/:id` and `/v1/books/{id}` name the same route; a query string is left off. */
const routeKey = (method: string, p: string) => `${method.toUpperCase()} ${p.replace(/:(\w+)/g, '{$1}')}`;

/** api.md against the OpenAPI document generated from the controllers. */
export function routeDrift(apiMd: string, openapi: OpenApi): string[] {
  const drift: string[] = [];
  const success = new Map<string, string>();
  for (const [p, ops] of Object.entries(openapi.paths))
    for (const [method, op] of Object.entries(ops))
      success.set(routeKey(method, p), Object.keys(op.responses).filter((s) => /^2\d\d$/.test(s))[0] ?? '');
  const documented = new Set<string>();
  for (const row of tableRows(apiMd, 'request')) {
    const route = ROUTE.exec(codeSpans(row[0])[0] ?? '');
    if (!route) continue;
    const key = routeKey(route[1], route[2]);
    documented.add(key);
    const status = /\b([1-5]\d\d)\b/.exec(row[row.length - 1])?.[1];
    if (!success.has(key)) drift.push(`api.md documents ${key}, which the OpenAPI document lacks`);
    else if (status !== success.get(key))
      drift.push(`api.md says ${key} answers ${status ?? 'nothing'}; it answers ${success.get(key)}`);
  }
  // outside /v1 (health, metrics, problem pages) a route may be named in prose instead
  for (const span of apiMd
    .split('\n')
    .filter((l) => !l.startsWith('```'))
    .flatMap(codeSpans)) {
    const route = ROUTE.exec(span);
    if (route && !route[2].startsWith('/v1/')) documented.add(routeKey(route[1], route[2]));
  }
  for (const key of success.keys())
    if (!documented.has(key)) drift.push(`the OpenAPI document has ${key}, which api.md does not document`);
  return drift;
}

/** events.md's `### \`Type\`` sections against the event types the domain knows. */
export function eventDrift(eventsMd: string, types: readonly string[]): string[] {
  const sections = [...eventsMd.matchAll(/^### `(\w+)`\s*$/gm)].map((m) => m[1]);
  return [
    ...types.filter((t) => !sections.includes(t)).map((t) => `events.md has no section for ${t}`),
    ...sections.filter((s) => !types.includes(s)).map((s) => `events.md documents ${s}, which is no event type`),
  ];
}

/** errors.md's catalogue table, and the summary table of api.md, against the problem catalogue. */
export function problemDrift(errorsMd: string, apiMd: string, catalogue: Catalogue): string[] {
  const drift: string[] = [];
  const listed = new Map<string, number>();
  for (const row of tableRows(errorsMd, 'code')) {
    const code = codeSpans(row[0])[0];
    if (code) listed.set(code, Number(row[1]));
  }
  for (const [code, { status }] of Object.entries(catalogue)) {
    if (!listed.has(code)) drift.push(`errors.md lacks ${code}`);
    else if (listed.get(code) !== status) drift.push(`errors.md says ${code} is ${listed.get(code)}; it is ${status}`);
  }
  for (const code of listed.keys())
    if (!catalogue[code]) drift.push(`errors.md lists ${code}, which is no problem code`);
  // api.md's short table: every code it names, under the right status
  for (const row of tableRows(apiMd, 'status')) {
    const status = Number(row[0]);
    for (const code of codeSpans(row[1]).filter((c) => /^[a-z_]+$/.test(c))) {
      if (!catalogue[code]) drift.push(`api.md lists ${code}, which is no problem code`);
      else if (catalogue[code].status !== status)
        drift.push(`api.md lists ${code} under ${status}; it is ${catalogue[code].status}`);
    }
  }
  return drift;
}

/**
 * Documented in configuration.md's tables but not in the env schema, each for a reason. (The
 * standard OTEL_* variables the SDK reads itself are named in prose there, not in the tables.)
 */
export const DOCUMENTED_OUTSIDE_SCHEMA: Readonly<Record<string, string>> = {};

/** configuration.md's `| variable |` tables against the env schema (libs/config/src/env.ts). */
export function envDrift(configMd: string, variables: readonly string[]): string[] {
  const documented = new Set(
    tableRows(configMd, 'variable').flatMap((row) => codeSpans(row[0]).filter((c) => /^[A-Z][A-Z0-9_]+$/.test(c))),
  );
  return [
    ...variables.filter((v) => !documented.has(v)).map((v) => `configuration.md does not document ${v}`),
    ...[...documented]
      .filter((v) => !variables.includes(v) && !(v in DOCUMENTED_OUTSIDE_SCHEMA))
      .map((v) => `configuration.md documents ${v}, which the env schema does not read`),
  ];
}

describe('the docs agree with the code', () => {
  const apiMd = read('docs/api.md');
  const openapi = JSON.parse(read('docs/openapi.json')) as OpenApi;
  const eventsMd = read('docs/events.md');
  const errorsMd = read('docs/errors.md');
  const configMd = read('docs/configuration.md');

  it('api.md: every route with its status is in the OpenAPI document, and every operation in api.md', () => {
    expect(routeDrift(apiMd, openapi)).toEqual([]);
  });

  it('events.md: a section for every event type, and no other', () => {
    expect(eventDrift(eventsMd, CONVERSATION_EVENT_TYPES)).toEqual([]);
  });

  it('errors.md (and api.md): every problem code with its status, and no other', () => {
    expect(problemDrift(errorsMd, apiMd, PROBLEM_CATALOGUE)).toEqual([]);
  });

  it('configuration.md: every variable of the env schema, and no other', () => {
    expect(envDrift(configMd, ENV_VARIABLES)).toEqual([]);
  });

  describe('each check notices a planted drift', () => {
    const plant = (doc: string, from: string, to: string) => {
      expect(doc).toContain(from); // the line the drift is planted in still exists
      return doc.replace(from, to);
    };

    it('a wrong status, a route the code lacks, an operation left out', () => {
      const booksRow = /^\| `POST \/v1\/books` .*$/m.exec(apiMd)![0];
      const wrongStatus = booksRow.replace(/\| 202 ([^|]*)\|$/, '| 201 $1|');
      expect(routeDrift(plant(apiMd, booksRow, wrongStatus), openapi)).toEqual([
        'api.md says POST /v1/books answers 201; it answers 202',
      ]);
      const renamed = booksRow.replace('`POST /v1/books`', '`POST /v1/library`');
      expect(routeDrift(plant(apiMd, booksRow, renamed), openapi)).toEqual([
        'api.md documents POST /v1/library, which the OpenAPI document lacks',
        'the OpenAPI document has POST /v1/books, which api.md does not document',
      ]);
      const eventsRow = /^\| `GET \/v1\/books\/:id\/events` .*\n/m.exec(apiMd)![0];
      expect(routeDrift(plant(apiMd, eventsRow, ''), openapi)).toEqual([
        'the OpenAPI document has GET /v1/books/{id}/events, which api.md does not document',
      ]);
    });

    it('an event type without a section, a section without an event type', () => {
      expect(
        eventDrift(plant(eventsMd, '### `TurnCancelled`', '### `TurnAbandoned`'), CONVERSATION_EVENT_TYPES),
      ).toEqual([
        'events.md has no section for TurnCancelled',
        'events.md documents TurnAbandoned, which is no event type',
      ]);
    });

    it('a wrong status, a missing code, an unknown code', () => {
      const row = '| `budget_exceeded` | 402 |';
      expect(problemDrift(plant(errorsMd, row, '| `budget_exceeded` | 429 |'), apiMd, PROBLEM_CATALOGUE)).toEqual([
        'errors.md says budget_exceeded is 429; it is 402',
      ]);
      expect(problemDrift(plant(errorsMd, '| `not_ready` |', '| `not_readied` |'), apiMd, PROBLEM_CATALOGUE)).toEqual([
        'errors.md lacks not_ready',
        'errors.md lists not_readied, which is no problem code',
      ]);
      expect(
        problemDrift(errorsMd, plant(apiMd, '| 415 | `book_unsupported_type`', '| 400 | `book_unsupported_type`'), {
          ...PROBLEM_CATALOGUE,
        }),
      ).toEqual(['api.md lists book_unsupported_type under 400; it is 415']);
    });

    it('a variable the schema reads but the docs leave out, one the docs name but the schema lacks', () => {
      expect(envDrift(plant(configMd, '| `SSE_RETRY_MS` |', '| `SSE_RETRY_DELAY_MS` |'), ENV_VARIABLES)).toEqual([
        'configuration.md does not document SSE_RETRY_MS',
        'configuration.md documents SSE_RETRY_DELAY_MS, which the env schema does not read',
      ]);
    });
  });
});
