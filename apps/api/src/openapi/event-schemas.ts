import type { SchemaObject } from '@nestjs/swagger/dist/interfaces/open-api-spec.interface';
import { CONVERSATION_EVENT_TYPES, CONVERSATION_EVENTS_JSON_SCHEMA } from '@parley/conversation';

/**
 * The conversation events' OpenAPI schemas, from the JSON Schema that `npm run openapi` generates
 * out of the typed event contract (libs/conversation/src/events.ts), so the document cannot drift
 * from the events the code writes. JSON Schema's `const`, type lists and `null` become OpenAPI
 * 3.0's `enum` and `nullable`; objects stay open (`additionalProperties` is dropped) so a client
 * keeps reading when an event gains an optional field.
 */
export function eventSchemas(): Record<string, SchemaObject> {
  const definitions = (CONVERSATION_EVENTS_JSON_SCHEMA as { definitions: Record<string, unknown> }).definitions;
  const schemas: Record<string, SchemaObject> = {};
  for (const [name, schema] of Object.entries(definitions)) {
    if (name === 'ConversationEvent') continue;
    schemas[name] = toOpenApi30(schema) as SchemaObject;
  }
  return schemas;
}

/** The schema name of an event type's envelope, e.g. ToolInvokedEnvelope. */
export const envelopeSchemaName = (type: string): string => `${type}Envelope`;

/** One envelope schema per event type (the envelope and that event's type and data), and their union. */
export function envelopeSchemas(): Record<string, SchemaObject> {
  const out: Record<string, SchemaObject> = {};
  for (const type of CONVERSATION_EVENT_TYPES) {
    out[envelopeSchemaName(type)] = {
      allOf: [{ $ref: '#/components/schemas/EventEnvelopeDto' }, { $ref: `#/components/schemas/${type}` }],
    };
  }
  out.ConversationEventEnvelope = {
    description: 'A stored conversation event as served (docs/events.md), one schema per `type`.',
    oneOf: CONVERSATION_EVENT_TYPES.map((type) => ({ $ref: `#/components/schemas/${envelopeSchemaName(type)}` })),
    discriminator: {
      propertyName: 'type',
      mapping: Object.fromEntries(
        CONVERSATION_EVENT_TYPES.map((type) => [type, `#/components/schemas/${envelopeSchemaName(type)}`]),
      ),
    },
  };
  return out;
}

function toOpenApi30(node: unknown): unknown {
  if (Array.isArray(node)) return node.map(toOpenApi30);
  if (!node || typeof node !== 'object') return node;
  const out: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(node)) {
    if (key === 'additionalProperties' && value === false) continue;
    if (key === '$ref' && typeof value === 'string')
      out.$ref = value.replace('#/definitions/', '#/components/schemas/');
    else if (key === 'const') out.enum = [value];
    else if (key === 'type' && Array.isArray(value)) {
      const types = value.filter((t) => t !== 'null');
      if (types.length === 1) out.type = types[0];
      else out.anyOf = types.map((t) => ({ type: t }));
      if (types.length < value.length) out.nullable = true;
    } else out[key] = toOpenApi30(value);
  }
  return out;
}

const ref = (name: string) => ({ $ref: `#/components/schemas/${name}` });

/** One Server-Sent Events frame: its `event:` (what the union is discriminated by), `id:` and `data:` (JSON). */
function frame(events: readonly string[], data: SchemaObject | { $ref: string }, id: boolean): SchemaObject {
  return {
    type: 'object',
    properties: {
      event: { type: 'string', enum: [...events] },
      ...(id ? { id: { type: 'integer', minimum: 1, description: "the event's version" } } : {}),
      data,
    },
    required: id ? ['event', 'id', 'data'] : ['event', 'data'],
  };
}

/** A union of frame schemas, discriminated by each frame's `event:`. */
function frameUnion(description: string, frames: Record<string, readonly string[]>): SchemaObject {
  return {
    description,
    oneOf: Object.keys(frames).map(ref),
    discriminator: {
      propertyName: 'event',
      mapping: Object.fromEntries(
        Object.entries(frames).flatMap(([schema, events]) =>
          events.map((event) => [event, `#/components/schemas/${schema}`]),
        ),
      ),
    },
  };
}

/**
 * The frames of the SSE streams (text/event-stream), as objects of their fields: `event`, `id`
 * when the frame has one, and `data` parsed as JSON. OpenAPI 3.0 cannot type a stream's items;
 * each stream's response names its frame union in `x-itemSchema` (OpenAPI 3.2's `itemSchema`).
 */
export function streamFrameSchemas(): Record<string, SchemaObject> {
  return {
    StoredEventFrame: frame(CONVERSATION_EVENT_TYPES, ref('ConversationEventEnvelope'), true),
    AssistantTextDelta: {
      type: 'object',
      description: 'a token delta of the reply being written: live only, never stored; AssistantReplied holds the text',
      properties: {
        turnId: { type: 'string', format: 'uuid' },
        iteration: { type: 'integer', minimum: 1, description: 'the LLM call of the turn' },
        attempt: { type: 'integer', minimum: 1, description: 'more than 1: drop the text of earlier attempts' },
        index: { type: 'integer', minimum: 0, description: '0, 1, … within one attempt of one call' },
        text: { type: 'string' },
      },
      required: ['turnId', 'iteration', 'attempt', 'index', 'text'],
    },
    AssistantTextDeltaFrame: frame(['AssistantTextDelta'], ref('AssistantTextDelta'), false),
    ConversationStreamFrame: frameUnion('A frame of GET /v1/conversations/{id}/stream, by its `event:`.', {
      StoredEventFrame: CONVERSATION_EVENT_TYPES,
      AssistantTextDeltaFrame: ['AssistantTextDelta'],
    }),
    BookIngestFrame: frame(['progress', 'ready', 'failed'], ref('BookDto'), false),
    BookStreamFrame: frameUnion('A frame of GET /v1/books/{id}/events, by its `event:`.', {
      BookIngestFrame: ['progress', 'ready', 'failed'],
    }),
  };
}
