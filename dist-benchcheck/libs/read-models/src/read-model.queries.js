"use strict";
Object.defineProperty(exports, "__esModule", { value: true });
exports.ReadModelQueries = void 0;
const cursor_1 = require("./cursor");
const isActivityCursor = (v) => Array.isArray(v) &&
    v.length === 2 &&
    typeof v[0] === 'string' &&
    !Number.isNaN(Date.parse(v[0])) &&
    /^[0-9a-f-]{36}$/.test(String(v[1]));
const isVersionCursor = (v) => Number.isInteger(v) && v >= 0;
/** Queries over the read models; every one is scoped to its owner. */
class ReadModelQueries {
    constructor(pool) {
        this.pool = pool;
    }
    /** Newest activity first; the cursor is the last row's (last_activity_at, id). */
    async listConversations(ownerId, opts) {
        const after = opts.cursor ? (0, cursor_1.decodeCursor)(opts.cursor, isActivityCursor) : null;
        const { rows } = await this.pool.query(`SELECT id, book_id, title, reading_position, forked_from, version, message_count, created_at,
              to_char(last_activity_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"') AS activity_key, last_activity_at
         FROM conversations
        WHERE owner_id = $1
          AND ($2::uuid IS NULL OR book_id = $2)
          AND ($3::timestamptz IS NULL OR (last_activity_at, id) < ($3::timestamptz, $4::uuid))
        ORDER BY last_activity_at DESC, id DESC
        LIMIT $5`, [ownerId, opts.bookId ?? null, after?.[0] ?? null, after?.[1] ?? null, opts.limit + 1]);
        const page = rows.slice(0, opts.limit);
        const last = page[page.length - 1];
        return {
            items: page.map((r) => ({
                id: r.id,
                bookId: r.book_id,
                title: r.title,
                readingPosition: r.reading_position,
                forkedFrom: r.forked_from,
                version: r.version,
                messageCount: r.message_count,
                createdAt: r.created_at.toISOString(),
                lastActivityAt: r.last_activity_at.toISOString(),
            })),
            nextCursor: rows.length > opts.limit ? (0, cursor_1.encodeCursor)([last.activity_key, last.id]) : null,
        };
    }
    /** Oldest first, paged by stream version. */
    async listMessages(conversationId, opts) {
        const after = opts.cursor ? (0, cursor_1.decodeCursor)(opts.cursor, isVersionCursor) : 0;
        const { rows } = await this.pool.query(`SELECT * FROM messages WHERE conversation_id = $1 AND version > $2 ORDER BY version LIMIT $3`, [conversationId, after, opts.limit + 1]);
        const page = rows.slice(0, opts.limit);
        return {
            items: page.map((r) => ({
                id: r.id,
                conversationId: r.conversation_id,
                version: r.version,
                role: r.role,
                turnId: r.turn_id,
                content: r.content,
                selectedText: r.selected_text,
                toolInvocations: r.tool_invocations ?? [],
                citations: r.citations ?? [],
                model: r.model,
                usage: r.usage,
                costUsd: r.cost_usd,
                isError: r.is_error,
                createdAt: r.created_at.toISOString(),
            })),
            nextCursor: rows.length > opts.limit ? (0, cursor_1.encodeCursor)(page[page.length - 1].version) : null,
        };
    }
}
exports.ReadModelQueries = ReadModelQueries;
//# sourceMappingURL=read-model.queries.js.map