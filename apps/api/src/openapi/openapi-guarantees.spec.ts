import { readFileSync } from 'node:fs';
import path from 'node:path';
import { plainToInstance } from 'class-transformer';
import { validateSync } from 'class-validator';
import { CONVERSATION_EVENT_TYPES } from '@parley/conversation';
import { projectRoot } from '@parley/platform';
import { CreateConversationDto, UpdateConversationDto } from '../conversations/conversation.dto';
import { parseIdempotencyKey } from '../conversations/idempotency-key';
import { parseIfMatch } from '../conversations/if-match';
import { parseLastEventId } from '../conversations/last-event-id';
import { PROBLEM_CODES } from '../http/problem-catalogue';

type Schema = {
  type?: string;
  pattern?: string;
  minimum?: number;
  maximum?: number;
  minLength?: number;
  maxLength?: number;
  maxItems?: number;
  minItems?: number;
  uniqueItems?: boolean;
  nullable?: boolean;
  additionalProperties?: unknown;
  properties?: Record<string, Schema>;
  items?: Schema;
  $ref?: string;
  allOf?: Schema[];
  required?: string[];
  format?: string;
};
type Parameter = { name: string; in: string; schema: Schema };
type Operation = { parameters?: Parameter[]; requestBody?: { content: Record<string, { schema: Schema }> } };

const document = JSON.parse(readFileSync(path.join(projectRoot(__dirname), 'docs/openapi.json'), 'utf8')) as {
  paths: Record<string, Record<string, Operation>>;
  components: { schemas: Record<string, Schema> };
};
const operations = Object.entries(document.paths).flatMap(([route, item]) =>
  Object.entries(item).map(([method, operation]) => ({ route, method, operation })),
);
const parameters = operations.flatMap(({ route, method, operation }) =>
  (operation.parameters ?? []).map((p) => ({ at: `${method} ${route} ${p.in} ${p.name}`, ...p })),
);
const component = (name: string): Schema => document.components.schemas[name]!;
const resolve = (s: Schema): Schema => (s.$ref ? component(s.$ref.split('/').pop()!) : s);

/**
 * What docs/openapi.json promises, checked against what the server does: each class of departure an
 * outside fuzzer (Schemathesis) found once, so that it cannot come back unnoticed.
 */
describe('docs/openapi.json says what the server does', () => {
  it('declares every numeric parameter an integer with the bounds the DTO checks', () => {
    const numeric = parameters.filter((p) => p.schema.type === 'number' || p.schema.type === 'integer');
    expect(new Set(numeric.map((p) => p.name))).toEqual(new Set(['after', 'k', 'limit', 'version']));
    for (const p of numeric) {
      expect({ at: p.at, type: p.schema.type }).toEqual({ at: p.at, type: 'integer' });
      expect({ at: p.at, bounded: p.schema.minimum !== undefined && p.schema.maximum !== undefined }).toEqual({
        at: p.at,
        bounded: true,
      });
    }
    expect(component('ForkConversationDto').properties!.version).toMatchObject({
      type: 'integer',
      minimum: 1,
      maximum: 2 ** 31 - 1,
    });
  });

  const headers: [string, (v: string) => unknown, string[], string[]][] = [
    ['If-Match', parseIfMatch, ['"7"', 'W/"7"', '7', ' "12" '], ['', 'abc', '"x"', '-1', '"12345678901"']],
    ['Last-Event-ID', parseLastEventId, ['0', '7', '2147483647'], ['', ' 7', '-1', 'x', '12345678901']],
    ['Idempotency-Key', parseIdempotencyKey, ['a', 'retry-1', 'x'.repeat(200)], ['', 'a b', 'é', 'x'.repeat(201)]],
  ];
  it.each(headers)('states the %s header as the server parses it', (name, parse, good, bad) => {
    const declared = parameters.filter((p) => p.in === 'header' && p.name === name);
    expect(declared.length).toBeGreaterThan(0);
    for (const p of declared) {
      const pattern = new RegExp(p.schema.pattern!);
      for (const v of good) {
        expect({ v, matches: pattern.test(v) }).toEqual({ v, matches: true });
        expect(() => parse(v)).not.toThrow();
      }
      for (const v of bad) {
        expect(() => parse(v)).toThrow();
        expect({ v, matches: pattern.test(v) && (p.schema.maxLength ?? Infinity) >= v.length }).toEqual({
          v,
          matches: false,
        });
      }
    }
  });

  it('states the body rules the DTOs check', () => {
    expect(component('CreateWebhookDto').properties!.events).toMatchObject({ minItems: 1, uniqueItems: true });
    expect(component('PostMessageDto').properties!.content).toMatchObject({ pattern: '\\S', minLength: 1 });
    expect(component('StartBatchDto').properties!.prompts!.items).toMatchObject({ pattern: '\\S', minLength: 1 });
    for (const name of ['CreateConversationDto', 'UpdateConversationDto']) {
      const bookIds = component(name).properties!.bookIds!;
      expect(bookIds).toMatchObject({ uniqueItems: true, maxItems: 20 });
      expect(bookIds.nullable).toBeUndefined();
    }
  });

  it.each([CreateConversationDto, UpdateConversationDto])(
    'refuses bookIds: null, which %p does not declare nullable',
    (dto) => {
      expect(validateSync(plainToInstance(dto, { bookIds: null })).map((e) => e.property)).toEqual(['bookIds']);
      expect(validateSync(plainToInstance(dto, {}))).toEqual([]);
    },
  );

  it('types each content type of POST /v1/books: the JSON fields, or the multipart form with its file', () => {
    const content = document.paths['/v1/books']!.post!.requestBody!.content;
    expect(Object.keys(content).sort()).toEqual(['application/json', 'multipart/form-data']);
    const json = resolve(content['application/json']!.schema);
    expect(json).toMatchObject({ required: expect.arrayContaining(['title', 'format', 'content']) });
    const form = resolve(content['multipart/form-data']!.schema);
    expect(form.properties!.file).toMatchObject({ type: 'string', format: 'binary' });
    expect(form).toMatchObject({ required: ['file'] });
    expect(Object.keys(form.properties!).sort()).toEqual(['author', 'file', 'format', 'title', 'visibility']);
  });

  it('types the frames of every SSE stream as a union by their event', () => {
    const streams = operations.filter(({ operation }) =>
      Object.values((operation as any).responses ?? {}).some((r: any) => r.content?.['text/event-stream']),
    );
    const frameUnion = (route: string) =>
      (document.paths[route]!.get as any).responses['200'].content['text/event-stream']['x-itemSchema'].$ref;
    expect(frameUnion('/v1/conversations/{id}/stream')).toBe('#/components/schemas/ConversationStreamFrame');
    expect(frameUnion('/v1/books/{id}/events')).toBe('#/components/schemas/BookStreamFrame');
    const mapping = (component('ConversationStreamFrame') as any).discriminator.mapping as Record<string, string>;
    expect(Object.keys(mapping).sort()).toEqual([...CONVERSATION_EVENT_TYPES, 'AssistantTextDelta'].sort());
    expect(streams.map((s) => `${s.method} ${s.route}`)).toEqual(
      expect.arrayContaining(['get /v1/conversations/{id}/stream', 'get /v1/books/{id}/events']),
    );
  });

  it('names the problem codes /problems/{code} answers, and says ?after= and nextCursor are the same number', () => {
    const code = parameters.find((p) => p.at === 'get /problems/{code} path code')!;
    expect(resolve(code.schema)).toMatchObject({ enum: PROBLEM_CODES });
    expect(component('EventPageDto').properties!.nextCursor).toMatchObject({ type: 'string', pattern: '^\\d{1,10}$' });
  });

  it('closes every request body schema, and the schemas nested in it (unknown fields are 400)', () => {
    const open: string[] = [];
    const visit = (s: Schema, at: string, seen: Set<Schema>): void => {
      const r = resolve(s);
      if (seen.has(r)) return;
      seen.add(r);
      for (const part of r.allOf ?? []) visit(part, at, seen);
      if (r.items) visit(r.items, `${at}[]`, seen);
      if (!r.properties) return;
      if (s.$ref && r.additionalProperties !== false) open.push(at);
      for (const [key, value] of Object.entries(r.properties)) visit(value, `${at}.${key}`, seen);
    };
    for (const { route, method, operation } of operations) {
      for (const [type, media] of Object.entries(operation.requestBody?.content ?? {})) {
        visit(media.schema, `${method} ${route} ${type}`, new Set());
      }
    }
    expect(open).toEqual([]);
    expect(component('PolicyPatchDto').additionalProperties).toBe(false);
  });
});
