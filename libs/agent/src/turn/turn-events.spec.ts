import { fold } from '@parley/conversation';
import { StoppedAttempt } from '../llm/llm.types';
import { modelCallStopped } from './turn-events';
import { evolveTurns, TurnEvent, turnsOf } from './turn-fold';

const at = { ownerId: 'reader', lastEventId: 'e-1' };
const usage = { inputTokens: 1200, outputTokens: 35, cacheReadInputTokens: 300, cacheCreationInputTokens: 0 };
const attempt = (messageId: string, cause: StoppedAttempt['cause']): StoppedAttempt => ({
  messageId,
  model: 'claude-sonnet-5-5',
  usage,
  cause,
});

describe(modelCallStopped.name, () => {
  it('says why the call stopped: broken midway, cancelled by the reader, or aborted otherwise', () => {
    const reasons = (cancelled: boolean) =>
      modelCallStopped(at, 't1', 2, [attempt('msg_1', 'broken'), attempt('msg_2', 'aborted')], { cancelled }).map(
        (e) => (e.data as { reason: string }).reason,
      );
    expect(reasons(true)).toEqual(['broken', 'cancelled']);
    expect(reasons(false)).toEqual(['broken', 'aborted']);
  });

  it('names each event after its turn, call and attempt: made again, it is the same event', () => {
    const [first] = modelCallStopped(at, 't1', 2, [attempt('msg_1', 'aborted')], { cancelled: true });
    expect(first).toMatchObject({
      type: 'ModelCallStopped',
      data: { turnId: 't1', iteration: 2, model: 'claude-sonnet-5-5', usage, reason: 'cancelled' },
      metadata: { userId: 'reader', correlationId: 't1', causationId: 'e-1' },
    });
    expect(first.id).toMatch(/^[0-9a-f-]{36}$/);
    const again = modelCallStopped({ ...at, lastEventId: 'e-2' }, 't1', 2, [attempt('msg_1', 'aborted')]);
    expect(again[0].id).toBe(first.id);
    const ids = [
      modelCallStopped(at, 't1', 2, [attempt('msg_2', 'aborted')]),
      modelCallStopped(at, 't1', 3, [attempt('msg_1', 'aborted')]),
      modelCallStopped(at, 't2', 2, [attempt('msg_1', 'aborted')]),
    ].map(([e]) => e.id);
    expect(new Set([first.id, ...ids]).size).toBe(4);
  });

  it('changes no fold: the conversation and its turns stay as they were', () => {
    let version = 0;
    const stored = (type: string, data: object) =>
      ({ type, data, version: ++version, occurredAt: new Date(), id: `e${version}` }) as TurnEvent;
    const log = [
      stored('ConversationStarted', { ownerId: 'reader', bookId: null, title: null, readingPosition: null }),
      stored('UserMessagePosted', { messageId: 'm1', turnId: 't1', content: 'q' }),
    ];
    const [stopped] = modelCallStopped(at, 't1', 1, [attempt('msg_1', 'broken')]);
    const after = stored(stopped.type, stopped.data);
    expect(fold([...log, after])).toEqual({ ...fold(log), version: 3 });
    const turns = turnsOf(log);
    expect(evolveTurns(turns, after)).toBe(turns);
  });
});
