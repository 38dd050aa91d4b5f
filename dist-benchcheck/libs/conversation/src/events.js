"use strict";
Object.defineProperty(exports, "__esModule", { value: true });
exports.conversationIdOf = exports.conversationStreamId = exports.CONVERSATION_EVENT_TYPES = void 0;
exports.CONVERSATION_EVENT_TYPES = [
    'ConversationStarted',
    'ConversationRenamed',
    'ReadingPositionChanged',
    'UserMessagePosted',
    'ToolInvoked',
    'ToolResultRecorded',
    'AssistantReplied',
    'TurnFailed',
    'TurnCancelled',
    'ConversationDeleted',
];
/** Streams are named by category and id, so the log can hold other aggregates later. */
const conversationStreamId = (conversationId) => `conversation-${conversationId}`;
exports.conversationStreamId = conversationStreamId;
const conversationIdOf = (streamId) => streamId.startsWith('conversation-') ? streamId.slice('conversation-'.length) : undefined;
exports.conversationIdOf = conversationIdOf;
//# sourceMappingURL=events.js.map