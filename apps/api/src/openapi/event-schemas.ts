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
