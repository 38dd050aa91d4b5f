"use strict";
Object.defineProperty(exports, "__esModule", { value: true });
exports.InvalidCursorError = void 0;
exports.encodeCursor = encodeCursor;
exports.decodeCursor = decodeCursor;
/** Opaque page cursors: base64url JSON, checked on the way back in. */
function encodeCursor(value) {
    return Buffer.from(JSON.stringify(value)).toString('base64url');
}
class InvalidCursorError extends Error {
    constructor() {
        super('cursor is not valid');
    }
}
exports.InvalidCursorError = InvalidCursorError;
function decodeCursor(cursor, isValid) {
    let value;
    try {
        value = JSON.parse(Buffer.from(cursor, 'base64url').toString('utf8'));
    }
    catch {
        throw new InvalidCursorError();
    }
    if (!isValid(value))
        throw new InvalidCursorError();
    return value;
}
//# sourceMappingURL=cursor.js.map