import {
  CONVERSATION_EVENT_TYPES as SERVER_EVENT_TYPES,
  TURN_ENDING_TYPES as SERVER_TURN_ENDINGS,
  type AssistantTextDelta as ServerTextDelta,
} from '../../conversation/src/events';
import {
  CONVERSATION_EVENT_TYPES,
  TURN_ENDING_TYPES,
  isConversationEventType,
  type AssistantTextDelta,
} from './events';

/** The package stands alone (no import of the server's libs), so its copies must say what the server's say. */
describe('the client package’s event types', () => {
  it('lists the stored event types the server has, in its order', () => {
    expect(CONVERSATION_EVENT_TYPES).toEqual(SERVER_EVENT_TYPES);
    expect(TURN_ENDING_TYPES).toEqual(SERVER_TURN_ENDINGS);
    expect(isConversationEventType('AssistantReplied')).toBe(true);
    expect(isConversationEventType('AssistantTextDelta')).toBe(false);
    expect(isConversationEventType('toString')).toBe(false);
  });

  it('types the live text delta as the server writes it', () => {
    // both ways assignable: the same fields, the same types (a compile error otherwise)
    const fromServer: AssistantTextDelta = {} as ServerTextDelta;
    const toServer: ServerTextDelta = {} as AssistantTextDelta;
    const keys: Record<keyof AssistantTextDelta, true> & Record<keyof ServerTextDelta, true> = {
      turnId: true,
      iteration: true,
      attempt: true,
      index: true,
      text: true,
    };
    expect([fromServer, toServer, Object.keys(keys)]).toHaveLength(3);
  });
});
