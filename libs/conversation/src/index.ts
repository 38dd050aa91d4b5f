export * from './events';
export * from './state';
export * from './decide';
export * from './turn-key';
/** JSON Schema of ConversationEvent, generated from events.ts by `npm run openapi` (checked by events.schema.spec.ts). */
export { default as CONVERSATION_EVENTS_JSON_SCHEMA } from './events.schema.json';
export * from './command-handler';
export * from './fork';
