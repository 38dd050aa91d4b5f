"use strict";
Object.defineProperty(exports, "__esModule", { value: true });
exports.findTurn = exports.pendingTurns = exports.fold = exports.TITLE_FROM_MESSAGE_MAX = void 0;
exports.initialState = initialState;
exports.titleFromMessage = titleFromMessage;
exports.evolve = evolve;
exports.TITLE_FROM_MESSAGE_MAX = 60;
function initialState() {
    return {
        status: 'none',
        ownerId: null,
        bookId: null,
        title: null,
        readingPosition: null,
        forkedFrom: null,
        version: 0,
        messageCount: 0,
        turns: [],
    };
}
/** A title from the first user message: at most 60 characters, cut at a word boundary. */
function titleFromMessage(content) {
    const text = content.replace(/\s+/g, ' ').trim();
    if (text.length <= exports.TITLE_FROM_MESSAGE_MAX)
        return text;
    const cut = text.slice(0, exports.TITLE_FROM_MESSAGE_MAX - 1);
    const space = cut.lastIndexOf(' ');
    return (space > 20 ? cut.slice(0, space) : cut).replace(/[\s,;:.-]+$/, '') + '…';
}
function evolve(state, event) {
    const s = { ...state, version: state.version + 1 };
    switch (event.type) {
        case 'ConversationStarted':
            return {
                ...s,
                status: 'active',
                ownerId: event.data.ownerId,
                bookId: event.data.bookId,
                title: event.data.title,
                readingPosition: event.data.readingPosition,
                forkedFrom: event.data.forkedFrom ?? null,
            };
        case 'ConversationRenamed':
            return { ...s, title: event.data.title };
        case 'ReadingPositionChanged':
            return { ...s, readingPosition: event.data.readingPosition };
        case 'UserMessagePosted':
            return {
                ...s,
                title: s.title ?? titleFromMessage(event.data.content),
                messageCount: s.messageCount + 1,
                turns: [...s.turns, { turnId: event.data.turnId, messageId: event.data.messageId, status: 'pending' }],
            };
        case 'ToolInvoked':
        case 'ToolResultRecorded':
            return s;
        case 'AssistantReplied':
            return { ...endTurn(s, event.data.turnId, 'replied'), messageCount: s.messageCount + 1 };
        case 'TurnFailed':
            return endTurn(s, event.data.turnId, 'failed');
        case 'TurnCancelled':
            return endTurn(s, event.data.turnId, 'cancelled');
        case 'ConversationDeleted':
            return { ...s, status: 'deleted' };
        default: {
            const unknown = event;
            return unknownEvent(s, unknown);
        }
    }
}
/** Events of types this build does not know (written by a newer one) still count as versions. */
function unknownEvent(state, _event) {
    return state;
}
function endTurn(state, turnId, status) {
    return {
        ...state,
        turns: state.turns.map((t) => (t.turnId === turnId && t.status === 'pending' ? { ...t, status } : t)),
    };
}
const fold = (events, from = initialState()) => events.reduce(evolve, from);
exports.fold = fold;
const pendingTurns = (state) => state.turns.filter((t) => t.status === 'pending');
exports.pendingTurns = pendingTurns;
const findTurn = (state, turnId) => state.turns.find((t) => t.turnId === turnId);
exports.findTurn = findTurn;
//# sourceMappingURL=state.js.map