"use strict";
Object.defineProperty(exports, "__esModule", { value: true });
exports.EVENT_COLUMNS = void 0;
exports.toStoredEvent = toStoredEvent;
exports.EVENT_COLUMNS = 'position, event_id, stream_id, version, type, data, metadata, transaction_id::text AS transaction_id, occurred_at';
function toStoredEvent(row) {
    return {
        id: row.event_id,
        streamId: row.stream_id,
        version: row.version,
        position: String(row.position),
        transactionId: row.transaction_id,
        type: row.type,
        data: row.data,
        metadata: row.metadata ?? {},
        occurredAt: row.occurred_at,
    };
}
//# sourceMappingURL=event-rows.js.map