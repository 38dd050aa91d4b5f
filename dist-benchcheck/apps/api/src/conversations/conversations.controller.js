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
exports.ConversationsController = void 0;
const common_1 = require("@nestjs/common");
const swagger_1 = require("@nestjs/swagger");
const pg_1 = require("pg");
const conversation_1 = require("@parley/conversation");
const event_store_1 = require("@parley/event-store");
const read_models_1 = require("@parley/read-models");
const auth_guard_1 = require("../auth/auth.guard");
const current_user_decorator_1 = require("../auth/current-user.decorator");
const conversation_dto_1 = require("./conversation.dto");
const conversations_service_1 = require("./conversations.service");
const event_envelope_dto_1 = require("./event-envelope.dto");
const event_envelope_1 = require("./event-envelope");
const event_stream_service_1 = require("./event-stream.service");
const if_match_1 = require("./if-match");
const post_rate_limiter_1 = require("./post-rate-limiter");
const turn_dispatch_1 = require("./turn-dispatch");
const Id = () => new common_1.ParseUUIDPipe({ version: undefined, exceptionFactory: () => new common_1.BadRequestException(['id must be a UUID']) });
let ConversationsController = class ConversationsController {
    constructor(conversations, store, streams, rateLimiter, dispatch, pool) {
        this.conversations = conversations;
        this.store = store;
        this.streams = streams;
        this.rateLimiter = rateLimiter;
        this.dispatch = dispatch;
        this.queries = new read_models_1.ReadModelQueries(pool);
    }
    create(user, body) {
        return this.conversations.start(user.id, body);
    }
    list(user, q) {
        return withCursor(() => this.queries.listConversations(user.id, { bookId: q.bookId, limit: q.limit ?? 20, cursor: q.cursor }));
    }
    show(user, id, q) {
        return this.conversations.view(user.id, id, q.version);
    }
    update(user, id, body, ifMatch) {
        return this.conversations.update(user.id, id, body, (0, if_match_1.parseIfMatch)(ifMatch));
    }
    async remove(user, id, ifMatch) {
        await this.conversations.delete(user.id, id, (0, if_match_1.parseIfMatch)(ifMatch));
    }
    async post(user, id, body, q, idempotencyKey, ifMatch) {
        const key = (0, if_match_1.parseIdempotencyKey)(idempotencyKey);
        const expected = (0, if_match_1.parseIfMatch)(ifMatch);
        await this.rateLimiter.consume(user.id);
        const result = await this.conversations.post(user.id, id, { content: body.content, selectedText: body.selectedText, multitask: q.multitask ?? 'enqueue' }, { idempotencyKey: key, ifMatch: expected });
        await this.dispatch.turnPosted(id, result.turnId);
        return result;
    }
    async messages(user, id, q) {
        await this.conversations.view(user.id, id);
        return withCursor(() => this.queries.listMessages(id, { limit: q.limit ?? 100, cursor: q.cursor }));
    }
    async events(user, id, q) {
        await this.conversations.view(user.id, id);
        const limit = q.limit ?? 1000;
        const events = await this.store.readStream((0, conversation_1.conversationStreamId)(id), { after: q.after ?? 0, limit: limit + 1 });
        const page = events.slice(0, limit);
        return {
            items: page.map(event_envelope_1.toEnvelope),
            nextCursor: events.length > limit ? String(page[page.length - 1].version) : null,
        };
    }
    async stream(user, id, q, req, res) {
        const lastEventId = req.headers['last-event-id'];
        let after = q.after ?? 0;
        if (lastEventId !== undefined) {
            const n = Number(lastEventId);
            if (typeof lastEventId !== 'string' || !/^\d{1,10}$/.test(lastEventId) || n > 2 ** 31 - 1) {
                throw new common_1.BadRequestException(['Last-Event-ID must be a stream version']);
            }
            after = n;
        }
        await this.conversations.view(user.id, id);
        await this.streams.serve(id, after, req, res);
    }
    async cancel(user, id, turnId) {
        const appended = await this.conversations.cancelTurn(user.id, id, turnId);
        await this.dispatch.turnCancelled(id, turnId);
        return { turnId, cancelled: appended.length > 0 };
    }
    fork(user, id, body) {
        return this.conversations.fork(user.id, id, body.version);
    }
};
exports.ConversationsController = ConversationsController;
__decorate([
    (0, common_1.Post)(),
    (0, swagger_1.ApiOperation)({ summary: 'Start a conversation (ConversationStarted)' }),
    __param(0, (0, current_user_decorator_1.CurrentUser)()),
    __param(1, (0, common_1.Body)()),
    __metadata("design:type", Function),
    __metadata("design:paramtypes", [Object, conversation_dto_1.CreateConversationDto]),
    __metadata("design:returntype", void 0)
], ConversationsController.prototype, "create", null);
__decorate([
    (0, common_1.Get)(),
    (0, swagger_1.ApiOperation)({ summary: 'List conversations, newest activity first' }),
    __param(0, (0, current_user_decorator_1.CurrentUser)()),
    __param(1, (0, common_1.Query)()),
    __metadata("design:type", Function),
    __metadata("design:paramtypes", [Object, conversation_dto_1.ListConversationsQueryDto]),
    __metadata("design:returntype", void 0)
], ConversationsController.prototype, "list", null);
__decorate([
    (0, common_1.Get)(':id'),
    (0, swagger_1.ApiOperation)({ summary: 'Show a conversation; with ?version=N, its state folded from events 1..N' }),
    __param(0, (0, current_user_decorator_1.CurrentUser)()),
    __param(1, (0, common_1.Param)('id', Id())),
    __param(2, (0, common_1.Query)()),
    __metadata("design:type", Function),
    __metadata("design:paramtypes", [Object, String, conversation_dto_1.ShowConversationQueryDto]),
    __metadata("design:returntype", void 0)
], ConversationsController.prototype, "show", null);
__decorate([
    (0, common_1.Patch)(':id'),
    (0, swagger_1.ApiOperation)({ summary: 'Rename and/or move the reading position' }),
    __param(0, (0, current_user_decorator_1.CurrentUser)()),
    __param(1, (0, common_1.Param)('id', Id())),
    __param(2, (0, common_1.Body)()),
    __param(3, (0, common_1.Headers)('if-match')),
    __metadata("design:type", Function),
    __metadata("design:paramtypes", [Object, String, conversation_dto_1.UpdateConversationDto, String]),
    __metadata("design:returntype", void 0)
], ConversationsController.prototype, "update", null);
__decorate([
    (0, common_1.Delete)(':id'),
    (0, common_1.HttpCode)(204),
    (0, swagger_1.ApiOperation)({ summary: 'Delete (ConversationDeleted); every later call answers 404' }),
    __param(0, (0, current_user_decorator_1.CurrentUser)()),
    __param(1, (0, common_1.Param)('id', Id())),
    __param(2, (0, common_1.Headers)('if-match')),
    __metadata("design:type", Function),
    __metadata("design:paramtypes", [Object, String, String]),
    __metadata("design:returntype", Promise)
], ConversationsController.prototype, "remove", null);
__decorate([
    (0, common_1.Post)(':id/messages'),
    (0, common_1.HttpCode)(202),
    (0, swagger_1.ApiOperation)({ summary: 'Post a message (UserMessagePosted); an agent turn answers it' }),
    __param(0, (0, current_user_decorator_1.CurrentUser)()),
    __param(1, (0, common_1.Param)('id', Id())),
    __param(2, (0, common_1.Body)()),
    __param(3, (0, common_1.Query)()),
    __param(4, (0, common_1.Headers)('idempotency-key')),
    __param(5, (0, common_1.Headers)('if-match')),
    __metadata("design:type", Function),
    __metadata("design:paramtypes", [Object, String, conversation_dto_1.PostMessageDto,
        conversation_dto_1.PostMessageQueryDto, String, String]),
    __metadata("design:returntype", Promise)
], ConversationsController.prototype, "post", null);
__decorate([
    (0, common_1.Get)(':id/messages'),
    (0, swagger_1.ApiOperation)({ summary: 'Messages (user, assistant, tool_result), oldest first, paged' }),
    __param(0, (0, current_user_decorator_1.CurrentUser)()),
    __param(1, (0, common_1.Param)('id', Id())),
    __param(2, (0, common_1.Query)()),
    __metadata("design:type", Function),
    __metadata("design:paramtypes", [Object, String, conversation_dto_1.PageQueryDto]),
    __metadata("design:returntype", Promise)
], ConversationsController.prototype, "messages", null);
__decorate([
    (0, common_1.Get)(':id/events'),
    (0, swagger_1.ApiOperation)({ summary: 'The stream as JSON: events with version > after' }),
    (0, swagger_1.ApiOkResponse)({ type: event_envelope_dto_1.EventEnvelopeDto, isArray: true }),
    __param(0, (0, current_user_decorator_1.CurrentUser)()),
    __param(1, (0, common_1.Param)('id', Id())),
    __param(2, (0, common_1.Query)()),
    __metadata("design:type", Function),
    __metadata("design:paramtypes", [Object, String, conversation_dto_1.EventsQueryDto]),
    __metadata("design:returntype", Promise)
], ConversationsController.prototype, "events", null);
__decorate([
    (0, common_1.Get)(':id/stream'),
    (0, auth_guard_1.AllowQueryToken)(),
    (0, swagger_1.ApiProduces)('text/event-stream'),
    (0, swagger_1.ApiOperation)({
        summary: 'SSE: stored events after Last-Event-ID (or ?after=), then live ones; AssistantTextDelta frames carry no id',
    }),
    __param(0, (0, current_user_decorator_1.CurrentUser)()),
    __param(1, (0, common_1.Param)('id', Id())),
    __param(2, (0, common_1.Query)()),
    __param(3, (0, common_1.Req)()),
    __param(4, (0, common_1.Res)()),
    __metadata("design:type", Function),
    __metadata("design:paramtypes", [Object, String, conversation_dto_1.StreamQueryDto, Object, Object]),
    __metadata("design:returntype", Promise)
], ConversationsController.prototype, "stream", null);
__decorate([
    (0, common_1.Post)(':id/turns/:turnId/cancel'),
    (0, common_1.HttpCode)(202),
    (0, swagger_1.ApiOperation)({ summary: 'Cancel a turn (TurnCancelled); a finished turn is left as it is' }),
    __param(0, (0, current_user_decorator_1.CurrentUser)()),
    __param(1, (0, common_1.Param)('id', Id())),
    __param(2, (0, common_1.Param)('turnId', Id())),
    __metadata("design:type", Function),
    __metadata("design:paramtypes", [Object, String, String]),
    __metadata("design:returntype", Promise)
], ConversationsController.prototype, "cancel", null);
__decorate([
    (0, common_1.Post)(':id/fork'),
    (0, swagger_1.ApiOperation)({ summary: 'Fork: a new conversation whose history is events 1..version' }),
    __param(0, (0, current_user_decorator_1.CurrentUser)()),
    __param(1, (0, common_1.Param)('id', Id())),
    __param(2, (0, common_1.Body)()),
    __metadata("design:type", Function),
    __metadata("design:paramtypes", [Object, String, conversation_dto_1.ForkConversationDto]),
    __metadata("design:returntype", void 0)
], ConversationsController.prototype, "fork", null);
exports.ConversationsController = ConversationsController = __decorate([
    (0, swagger_1.ApiTags)('conversations'),
    (0, swagger_1.ApiBearerAuth)(),
    (0, common_1.Controller)('conversations'),
    __param(5, (0, common_1.Inject)(pg_1.Pool)),
    __metadata("design:paramtypes", [conversations_service_1.ConversationsService,
        event_store_1.EventStore,
        event_stream_service_1.EventStreamService,
        post_rate_limiter_1.PostRateLimiter,
        turn_dispatch_1.TurnDispatch,
        pg_1.Pool])
], ConversationsController);
async function withCursor(query) {
    try {
        return await query();
    }
    catch (e) {
        if (e instanceof read_models_1.InvalidCursorError)
            throw new common_1.BadRequestException(['cursor is not valid']);
        throw e;
    }
}
//# sourceMappingURL=conversations.controller.js.map