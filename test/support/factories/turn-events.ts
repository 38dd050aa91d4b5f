import { TurnEvent } from '../../../libs/agent/src/turn/turn-fold';

/**
 * Turn events as the agent's fold reads them (libs/agent/src/turn specs): versions count up from 1
 * in each spec file, all at one instant.
 */
let version = 0;
export const at = new Date('2026-11-22T10:00:00Z');
export const e = (type: string, data: object): TurnEvent =>
  ({ type, data, version: ++version, occurredAt: at }) as TurnEvent;
export const posted = (turnId: string, content = `question ${turnId}`) =>
  e('UserMessagePosted', { messageId: `m-${turnId}`, turnId, content });
export const invoked = (turnId: string, toolUseId: string, iteration = 1, assistantText?: string) =>
  e('ToolInvoked', { turnId, toolUseId, name: 'search_book', input: { query: 'q' }, iteration, assistantText });
export const result = (turnId: string, toolUseId: string, chunks: Array<{ chunkId: string }> = [], citationStart = 1) =>
  e('ToolResultRecorded', { turnId, toolUseId, content: `result ${toolUseId}`, isError: false, chunks, citationStart });
export const replied = (turnId: string, content = `answer ${turnId}`) =>
  e('AssistantReplied', { turnId, messageId: `a-${turnId}`, content });
