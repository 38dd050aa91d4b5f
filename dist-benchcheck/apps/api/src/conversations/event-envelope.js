"use strict";
Object.defineProperty(exports, "__esModule", { value: true });
exports.toEnvelope = toEnvelope;
const conversation_1 = require("@parley/conversation");
function toEnvelope(e) {
    return {
        id: e.id,
        type: e.type,
        conversationId: (0, conversation_1.conversationIdOf)(e.streamId) ?? e.streamId,
        version: e.version,
        position: e.position,
        occurredAt: e.occurredAt.toISOString(),
        data: e.data,
        metadata: e.metadata,
    };
}
//# sourceMappingURL=event-envelope.js.map