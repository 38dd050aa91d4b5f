export * from './tools/agent-tool';
export * from './queue/turn-jobs';
