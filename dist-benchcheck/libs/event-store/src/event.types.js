"use strict";
Object.defineProperty(exports, "__esModule", { value: true });
exports.DuplicateEventIdError = exports.WrongExpectedVersionError = exports.LOG_START = void 0;
exports.LOG_START = { transactionId: '0', position: '0' };
class WrongExpectedVersionError extends Error {
    constructor(streamId, expected, actual) {
        super(`stream ${streamId} is at version ${actual}, expected ${String(expected)}`);
        this.streamId = streamId;
        this.expected = expected;
        this.actual = actual;
        this.name = 'WrongExpectedVersionError';
    }
}
exports.WrongExpectedVersionError = WrongExpectedVersionError;
class DuplicateEventIdError extends Error {
    constructor(eventIds) {
        super(`event ids already stored elsewhere: ${eventIds.join(', ')}`);
        this.eventIds = eventIds;
        this.name = 'DuplicateEventIdError';
    }
}
exports.DuplicateEventIdError = DuplicateEventIdError;
//# sourceMappingURL=event.types.js.map