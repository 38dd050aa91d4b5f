"use strict";
Object.defineProperty(exports, "__esModule", { value: true });
exports.DomainError = void 0;
exports.decide = decide;
const state_1 = require("./state");
/** Why a command cannot be carried out; the API maps each code to an HTTP status. */
class DomainError extends Error {
    constructor(code, message) {
        super(message);
        this.code = code;
        this.name = 'DomainError';
    }
}
exports.DomainError = DomainError;
/**
 * decide(command, state) → new events. Pure: ids and clock come in with the command.
 * A conversation another user owns is indistinguishable from a missing one (not_found).
 */
function decide(command, state) {
    if (command.type === 'StartConversation') {
        if (state.status !== 'none')
            throw new DomainError('already_exists', 'conversation already exists');
        const { userId, bookId, title, readingPosition } = command;
        return [{ type: 'ConversationStarted', data: { ownerId: userId, bookId, title, readingPosition } }];
    }
    if (state.status !== 'active' || state.ownerId !== command.userId) {
        throw new DomainError('not_found', 'conversation not found');
    }
    switch (command.type) {
        case 'RenameConversation':
            return state.title === command.title ? [] : [{ type: 'ConversationRenamed', data: { title: command.title } }];
        case 'ChangeReadingPosition':
            return state.readingPosition === command.readingPosition
                ? []
                : [{ type: 'ReadingPositionChanged', data: { readingPosition: command.readingPosition } }];
        case 'PostUserMessage': {
            const running = (0, state_1.pendingTurns)(state);
            if (running.length > 0 && command.multitask === 'reject') {
                throw new DomainError('turn_in_progress', `turn ${running[0].turnId} is still running`);
            }
            const { messageId, turnId, content, selectedText } = command;
            const posted = {
                type: 'UserMessagePosted',
                data: { messageId, turnId, content, ...(selectedText !== undefined ? { selectedText } : {}) },
            };
            // interrupt: the pending turns end (TurnCancelled) before the new one is posted
            const cancelled = command.multitask === 'interrupt'
                ? running.map((t) => ({ type: 'TurnCancelled', data: { turnId: t.turnId } }))
                : [];
            return [...cancelled, posted];
        }
        case 'CancelTurn': {
            const turn = (0, state_1.findTurn)(state, command.turnId);
            if (!turn)
                throw new DomainError('turn_not_found', 'turn not found');
            return turn.status === 'pending' ? [{ type: 'TurnCancelled', data: { turnId: turn.turnId } }] : [];
        }
        case 'DeleteConversation':
            return [{ type: 'ConversationDeleted', data: {} }];
        default: {
            const unhandled = command;
            throw new Error(`unhandled command ${unhandled.type}`);
        }
    }
}
//# sourceMappingURL=decide.js.map