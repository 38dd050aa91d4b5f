export * from './event.types';
export * from './event-store';
export * from './append-notifier';
export * from './checkpointed-consumer';
export * from './wakeup';
export * from './transaction';
export * from './transient-errors';
export * from './consumer-stats';
