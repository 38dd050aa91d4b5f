export * from './events';
export * from './state';
export * from './decide';
