export * from './conversations.projection';
export * from './read-model.queries';
export * from './cursor';
export * from './rebuild';
export * from './conversation-log.queries';
export * from './read-models.module';
export * from './usage-ledger';
export * from './usage-report';
export { ReadModelWrites } from './read-model.writes';
