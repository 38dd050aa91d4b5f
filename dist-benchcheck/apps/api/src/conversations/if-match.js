"use strict";
Object.defineProperty(exports, "__esModule", { value: true });
exports.parseIfMatch = parseIfMatch;
exports.parseIdempotencyKey = parseIdempotencyKey;
const common_1 = require("@nestjs/common");
/** `If-Match: "7"` (also W/"7" or 7) → 7; absent → undefined; anything else → 400. */
function parseIfMatch(header) {
    if (header === undefined)
        return undefined;
    const value = Array.isArray(header) ? header[0] : header;
    const m = /^\s*(?:W\/)?"?(\d{1,10})"?\s*$/.exec(value ?? '');
    const n = m ? Number(m[1]) : NaN;
    if (!Number.isSafeInteger(n) || n > 2 ** 31 - 1) {
        throw new common_1.BadRequestException(['If-Match must be a stream version, e.g. "3"']);
    }
    return n;
}
const IDEMPOTENCY_KEY = /^[\x21-\x7e]{1,200}$/;
function parseIdempotencyKey(header) {
    if (header === undefined)
        return undefined;
    const value = Array.isArray(header) ? header[0] : header;
    if (!IDEMPOTENCY_KEY.test(value ?? '')) {
        throw new common_1.BadRequestException(['Idempotency-Key must be 1..200 visible ASCII characters']);
    }
    return value;
}
//# sourceMappingURL=if-match.js.map