"use strict";
var __decorate = (this && this.__decorate) || function (decorators, target, key, desc) {
    var c = arguments.length, r = c < 3 ? target : desc === null ? desc = Object.getOwnPropertyDescriptor(target, key) : desc, d;
    if (typeof Reflect === "object" && typeof Reflect.decorate === "function") r = Reflect.decorate(decorators, target, key, desc);
    else for (var i = decorators.length - 1; i >= 0; i--) if (d = decorators[i]) r = (c < 3 ? d(r) : c > 3 ? d(target, key, r) : d(target, key)) || r;
    return c > 3 && r && Object.defineProperty(target, key, r), r;
};
var __metadata = (this && this.__metadata) || function (k, v) {
    if (typeof Reflect === "object" && typeof Reflect.metadata === "function") return Reflect.metadata(k, v);
};
var __param = (this && this.__param) || function (paramIndex, decorator) {
    return function (target, key) { decorator(target, key, paramIndex); }
};
Object.defineProperty(exports, "__esModule", { value: true });
exports.ConversationsService = void 0;
exports.assertVisible = assertVisible;
const common_1 = require("@nestjs/common");
const node_crypto_1 = require("node:crypto");
const pg_1 = require("pg");
const config_1 = require("@parley/config");
const conversation_1 = require("@parley/conversation");
const event_store_1 = require("@parley/event-store");
const deterministic_id_1 = require("./deterministic-id");
const CONFLICT_RETRIES = 5;
/**
 * Commands on conversations: load the stream, fold, decide, append at the folded version.
 * Without If-Match a lost race is retried on the new state; with it the client gets 409.
 */
let ConversationsService = class ConversationsService {
    constructor(store, pool, config) {
        this.store = store;
        this.pool = pool;
        this.config = config;
    }
    async load(conversationId, upTo) {
        const events = await this.store.readStream((0, conversation_1.conversationStreamId)(conversationId), { upTo });
        return { state: (0, conversation_1.fold)(events, (0, conversation_1.initialState)()), events };
    }
    /** The state of a conversation its owner may see; anything else is 404. */
    async view(userId, conversationId, version) {
        const { state, events } = await this.load(conversationId, version);
        assertVisible(state, userId);
        if (version !== undefined && state.version < version) {
            throw new common_1.NotFoundException(`the conversation has no version ${version}`);
        }
        return toView(conversationId, state, events);
    }
    async start(userId, input) {
        if (input.bookId)
            await this.assertBookVisible(userId, input.bookId);
        const id = (0, node_crypto_1.randomUUID)();
        await this.execute(id, {
            type: 'StartConversation',
            userId,
            bookId: input.bookId ?? null,
            title: input.title ?? null,
            readingPosition: input.readingPosition ?? null,
        });
        return this.view(userId, id);
    }
    async update(userId, conversationId, input, ifMatch) {
        if (input.title === undefined && input.readingPosition === undefined) {
            throw new common_1.BadRequestException('nothing to change: give title and/or readingPosition');
        }
        await this.executeMany(conversationId, [
            ...(input.title !== undefined ? [{ type: 'RenameConversation', userId, title: input.title }] : []),
            ...(input.readingPosition !== undefined
                ? [{ type: 'ChangeReadingPosition', userId, readingPosition: input.readingPosition }]
                : []),
        ], { ifMatch });
        return this.view(userId, conversationId);
    }
    async delete(userId, conversationId, ifMatch) {
        await this.execute(conversationId, { type: 'DeleteConversation', userId }, { ifMatch });
    }
    async post(userId, conversationId, input, opts) {
        if (input.content.trim().length === 0)
            throw new common_1.BadRequestException(['content must not be blank']);
        if (input.content.length > this.config.limits.messageMaxChars) {
            throw new common_1.BadRequestException([`content must be at most ${this.config.limits.messageMaxChars} characters`]);
        }
        // with an Idempotency-Key the ids are derived from it: a repeat finds (or races to) the same events
        const key = opts.idempotencyKey;
        const idFor = key ? (what) => (0, deterministic_id_1.deterministicId)(userId, conversationId, key, what) : () => (0, node_crypto_1.randomUUID)();
        const messageId = idFor('message');
        const turnId = idFor('turn');
        if (key) {
            const earlier = await this.earlierPost(userId, conversationId, idFor('event:UserMessagePosted'));
            if (earlier)
                return earlier;
        }
        try {
            const appended = await this.execute(conversationId, { type: 'PostUserMessage', userId, messageId, turnId, multitask: input.multitask, ...pick(input) }, { ifMatch: opts.ifMatch, eventId: (e) => idFor(`event:${e.type}`), correlationId: turnId });
            const posted = appended.find((e) => e.type === 'UserMessagePosted');
            return { messageId, turnId, version: posted.version, position: posted.position };
        }
        catch (e) {
            const earlier = key
                ? await this.earlierPost(userId, conversationId, idFor('event:UserMessagePosted'))
                : undefined;
            if (earlier)
                return earlier; // a concurrent repeat of this post won the race
            throw e;
        }
    }
    /** A new conversation whose history is the source's events 1..version; turns left open there end cancelled. */
    async fork(userId, sourceId, version) {
        const { state: now, events: all } = await this.load(sourceId);
        assertVisible(now, userId);
        if (version > now.version)
            throw new common_1.BadRequestException([`version must be at most ${now.version}`]);
        const history = all.slice(0, version);
        const atFork = (0, conversation_1.fold)(history);
        const start = history[0].data;
        const id = (0, node_crypto_1.randomUUID)();
        const metadata = { userId, causationId: history[version - 1].id };
        const events = [
            {
                id: (0, node_crypto_1.randomUUID)(),
                type: 'ConversationStarted',
                data: { ...start, forkedFrom: { conversationId: sourceId, version } },
                metadata,
            },
            ...history
                .slice(1)
                .map((e) => ({ id: (0, node_crypto_1.randomUUID)(), type: e.type, data: e.data, metadata: { ...e.metadata, causationId: e.id } })),
            ...atFork.turns
                .filter((t) => t.status === 'pending')
                .map((t) => ({ id: (0, node_crypto_1.randomUUID)(), type: 'TurnCancelled', data: { turnId: t.turnId }, metadata })),
        ];
        await this.store.append((0, conversation_1.conversationStreamId)(id), events, { expectedVersion: 'no_stream' });
        return this.view(userId, id);
    }
    async cancelTurn(userId, conversationId, turnId) {
        return this.execute(conversationId, { type: 'CancelTurn', userId, turnId }, { correlationId: turnId });
    }
    async execute(conversationId, command, opts = {}) {
        return this.executeMany(conversationId, [command], opts);
    }
    /** Decides every command on the same state and appends their events atomically. */
    async executeMany(conversationId, commands, opts = {}) {
        const streamId = (0, conversation_1.conversationStreamId)(conversationId);
        for (let attempt = 0;; attempt++) {
            const { state } = await this.load(conversationId);
            if (opts.ifMatch !== undefined && state.status === 'active' && state.version !== opts.ifMatch) {
                if (commands.every((c) => c.type !== 'StartConversation'))
                    assertVisible(state, commands[0].userId);
                throw new event_store_1.WrongExpectedVersionError(streamId, opts.ifMatch, state.version);
            }
            let s = state;
            const decided = [];
            for (const command of commands) {
                for (const event of (0, conversation_1.decide)(command, s)) {
                    decided.push(event);
                    s = (0, conversation_1.fold)([event], s);
                }
            }
            if (decided.length === 0)
                return [];
            const expected = state.status === 'none' ? 'no_stream' : state.version;
            const userId = commands[0].userId;
            const events = decided.map((e) => ({
                id: opts.eventId?.(e) ?? (0, node_crypto_1.randomUUID)(),
                type: e.type,
                data: e.data,
                metadata: { userId, ...(opts.correlationId ? { correlationId: opts.correlationId } : {}) },
            }));
            try {
                return (await this.store.append(streamId, events, { expectedVersion: expected })).events;
            }
            catch (e) {
                const retry = e instanceof event_store_1.WrongExpectedVersionError && opts.ifMatch === undefined && attempt < CONFLICT_RETRIES;
                if (!retry)
                    throw e;
            }
        }
    }
    async earlierPost(userId, conversationId, eventId) {
        const { rows } = await this.pool.query(`SELECT data, version, position::text AS position FROM events
        WHERE event_id = $1 AND stream_id = $2 AND metadata->>'userId' = $3`, [eventId, (0, conversation_1.conversationStreamId)(conversationId), userId]);
        const r = rows[0];
        return r && { messageId: r.data.messageId, turnId: r.data.turnId, version: r.version, position: r.position };
    }
    async assertBookVisible(userId, bookId) {
        const { rowCount } = await this.pool.query('SELECT 1 FROM books WHERE id = $1 AND owner_id = $2', [bookId, userId]);
        if (!rowCount)
            throw new common_1.NotFoundException('book not found');
    }
};
exports.ConversationsService = ConversationsService;
exports.ConversationsService = ConversationsService = __decorate([
    (0, common_1.Injectable)(),
    __param(1, (0, common_1.Inject)(pg_1.Pool)),
    __param(2, (0, common_1.Inject)(config_1.CONFIG)),
    __metadata("design:paramtypes", [event_store_1.EventStore,
        pg_1.Pool, Object])
], ConversationsService);
function pick(input) {
    return { content: input.content, ...(input.selectedText !== undefined ? { selectedText: input.selectedText } : {}) };
}
function assertVisible(state, userId) {
    if (state.status !== 'active' || state.ownerId !== userId)
        throw new conversation_1.DomainError('not_found', 'conversation not found');
}
function toView(id, state, events) {
    return {
        id,
        bookId: state.bookId,
        title: state.title,
        readingPosition: state.readingPosition,
        forkedFrom: state.forkedFrom,
        version: state.version,
        messageCount: state.messageCount,
        turns: state.turns,
        createdAt: events[0]?.occurredAt.toISOString() ?? null,
        lastActivityAt: events[events.length - 1]?.occurredAt.toISOString() ?? null,
    };
}
//# sourceMappingURL=conversations.service.js.map