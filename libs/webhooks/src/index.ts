export * from './webhook-messages';
export * from './webhook-secret';
export * from './webhook-url';
export * from './webhook-endpoints.repository';
export * from './webhook-outbox';
export * from './webhook-sender';
export * from './webhook-deliveries.consumer';
export * from './retry-delay';
