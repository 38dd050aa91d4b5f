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
Object.defineProperty(exports, "__esModule", { value: true });
exports.StreamQueryDto = exports.ShowConversationQueryDto = exports.EventsQueryDto = exports.PageQueryDto = exports.ListConversationsQueryDto = exports.ForkConversationDto = exports.PostMessageQueryDto = exports.PostMessageDto = exports.UpdateConversationDto = exports.CreateConversationDto = exports.CONTENT_HARD_MAX = exports.SELECTED_TEXT_MAX = exports.TITLE_MAX = void 0;
const swagger_1 = require("@nestjs/swagger");
const class_transformer_1 = require("class-transformer");
const class_validator_1 = require("class-validator");
exports.TITLE_MAX = 200;
exports.SELECTED_TEXT_MAX = 5_000;
/** hard ceiling; the configurable limit (MESSAGE_MAX_CHARS) is checked by the service */
exports.CONTENT_HARD_MAX = 200_000;
class CreateConversationDto {
}
exports.CreateConversationDto = CreateConversationDto;
__decorate([
    (0, swagger_1.ApiPropertyOptional)({ format: 'uuid' }),
    (0, class_validator_1.IsOptional)(),
    (0, class_validator_1.IsUUID)(),
    __metadata("design:type", String)
], CreateConversationDto.prototype, "bookId", void 0);
__decorate([
    (0, swagger_1.ApiPropertyOptional)({ maxLength: exports.TITLE_MAX }),
    (0, class_validator_1.IsOptional)(),
    (0, class_validator_1.IsString)(),
    (0, class_validator_1.MinLength)(1),
    (0, class_validator_1.MaxLength)(exports.TITLE_MAX),
    __metadata("design:type", String)
], CreateConversationDto.prototype, "title", void 0);
__decorate([
    (0, swagger_1.ApiPropertyOptional)({
        description: 'highest chapter index the reader has reached; null for no limit',
        nullable: true,
    }),
    (0, class_validator_1.IsOptional)(),
    (0, class_validator_1.ValidateIf)((_, v) => v !== null),
    (0, class_validator_1.IsInt)(),
    (0, class_validator_1.Min)(0),
    (0, class_validator_1.Max)(100_000),
    __metadata("design:type", Object)
], CreateConversationDto.prototype, "readingPosition", void 0);
class UpdateConversationDto {
}
exports.UpdateConversationDto = UpdateConversationDto;
__decorate([
    (0, swagger_1.ApiPropertyOptional)({ maxLength: exports.TITLE_MAX }),
    (0, class_validator_1.IsOptional)(),
    (0, class_validator_1.IsString)(),
    (0, class_validator_1.MinLength)(1),
    (0, class_validator_1.MaxLength)(exports.TITLE_MAX),
    __metadata("design:type", String)
], UpdateConversationDto.prototype, "title", void 0);
__decorate([
    (0, swagger_1.ApiPropertyOptional)({ nullable: true }),
    (0, class_validator_1.IsOptional)(),
    (0, class_validator_1.ValidateIf)((_, v) => v !== null),
    (0, class_validator_1.IsInt)(),
    (0, class_validator_1.Min)(0),
    (0, class_validator_1.Max)(100_000),
    __metadata("design:type", Object)
], UpdateConversationDto.prototype, "readingPosition", void 0);
class PostMessageDto {
}
exports.PostMessageDto = PostMessageDto;
__decorate([
    (0, swagger_1.ApiProperty)({ minLength: 1, maxLength: 16_000 }),
    (0, class_validator_1.IsString)(),
    (0, class_validator_1.MinLength)(1),
    (0, class_validator_1.MaxLength)(exports.CONTENT_HARD_MAX),
    __metadata("design:type", String)
], PostMessageDto.prototype, "content", void 0);
__decorate([
    (0, swagger_1.ApiPropertyOptional)({ maxLength: exports.SELECTED_TEXT_MAX, description: 'the passage the reader highlighted' }),
    (0, class_validator_1.IsOptional)(),
    (0, class_validator_1.IsString)(),
    (0, class_validator_1.MinLength)(1),
    (0, class_validator_1.MaxLength)(exports.SELECTED_TEXT_MAX),
    __metadata("design:type", String)
], PostMessageDto.prototype, "selectedText", void 0);
class PostMessageQueryDto {
}
exports.PostMessageQueryDto = PostMessageQueryDto;
__decorate([
    (0, swagger_1.ApiPropertyOptional)({ enum: ['enqueue', 'reject', 'interrupt'], default: 'enqueue' }),
    (0, class_validator_1.IsOptional)(),
    (0, class_validator_1.IsIn)(['enqueue', 'reject', 'interrupt']),
    __metadata("design:type", String)
], PostMessageQueryDto.prototype, "multitask", void 0);
class ForkConversationDto {
}
exports.ForkConversationDto = ForkConversationDto;
__decorate([
    (0, swagger_1.ApiProperty)({ minimum: 1 }),
    (0, class_validator_1.IsInt)(),
    (0, class_validator_1.Min)(1),
    (0, class_validator_1.Max)(2 ** 31 - 1),
    __metadata("design:type", Number)
], ForkConversationDto.prototype, "version", void 0);
class ListConversationsQueryDto {
}
exports.ListConversationsQueryDto = ListConversationsQueryDto;
__decorate([
    (0, swagger_1.ApiPropertyOptional)({ format: 'uuid' }),
    (0, class_validator_1.IsOptional)(),
    (0, class_validator_1.IsUUID)(),
    __metadata("design:type", String)
], ListConversationsQueryDto.prototype, "bookId", void 0);
__decorate([
    (0, swagger_1.ApiPropertyOptional)({ minimum: 1, maximum: 100, default: 20 }),
    (0, class_validator_1.IsOptional)(),
    (0, class_transformer_1.Type)(() => Number),
    (0, class_validator_1.IsInt)(),
    (0, class_validator_1.Min)(1),
    (0, class_validator_1.Max)(100),
    __metadata("design:type", Number)
], ListConversationsQueryDto.prototype, "limit", void 0);
__decorate([
    (0, swagger_1.ApiPropertyOptional)(),
    (0, class_validator_1.IsOptional)(),
    (0, class_validator_1.IsString)(),
    (0, class_validator_1.MaxLength)(500),
    __metadata("design:type", String)
], ListConversationsQueryDto.prototype, "cursor", void 0);
class PageQueryDto {
}
exports.PageQueryDto = PageQueryDto;
__decorate([
    (0, swagger_1.ApiPropertyOptional)({ minimum: 1, maximum: 500, default: 100 }),
    (0, class_validator_1.IsOptional)(),
    (0, class_transformer_1.Type)(() => Number),
    (0, class_validator_1.IsInt)(),
    (0, class_validator_1.Min)(1),
    (0, class_validator_1.Max)(500),
    __metadata("design:type", Number)
], PageQueryDto.prototype, "limit", void 0);
__decorate([
    (0, swagger_1.ApiPropertyOptional)(),
    (0, class_validator_1.IsOptional)(),
    (0, class_validator_1.IsString)(),
    (0, class_validator_1.MaxLength)(500),
    __metadata("design:type", String)
], PageQueryDto.prototype, "cursor", void 0);
class EventsQueryDto {
}
exports.EventsQueryDto = EventsQueryDto;
__decorate([
    (0, swagger_1.ApiPropertyOptional)({ minimum: 0, default: 0, description: 'return events with version > after' }),
    (0, class_validator_1.IsOptional)(),
    (0, class_transformer_1.Type)(() => Number),
    (0, class_validator_1.IsInt)(),
    (0, class_validator_1.Min)(0),
    (0, class_validator_1.Max)(2 ** 31 - 1),
    __metadata("design:type", Number)
], EventsQueryDto.prototype, "after", void 0);
__decorate([
    (0, swagger_1.ApiPropertyOptional)({ minimum: 1, maximum: 1000, default: 1000 }),
    (0, class_validator_1.IsOptional)(),
    (0, class_transformer_1.Type)(() => Number),
    (0, class_validator_1.IsInt)(),
    (0, class_validator_1.Min)(1),
    (0, class_validator_1.Max)(1000),
    __metadata("design:type", Number)
], EventsQueryDto.prototype, "limit", void 0);
class ShowConversationQueryDto {
}
exports.ShowConversationQueryDto = ShowConversationQueryDto;
__decorate([
    (0, swagger_1.ApiPropertyOptional)({ minimum: 1, description: 'the state folded from events 1..version' }),
    (0, class_validator_1.IsOptional)(),
    (0, class_transformer_1.Type)(() => Number),
    (0, class_validator_1.IsInt)(),
    (0, class_validator_1.Min)(1),
    (0, class_validator_1.Max)(2 ** 31 - 1),
    __metadata("design:type", Number)
], ShowConversationQueryDto.prototype, "version", void 0);
class StreamQueryDto extends EventsQueryDto {
}
exports.StreamQueryDto = StreamQueryDto;
__decorate([
    (0, swagger_1.ApiPropertyOptional)({ description: 'bearer token, for EventSource clients that cannot set headers' }),
    (0, class_validator_1.IsOptional)(),
    (0, class_validator_1.IsString)(),
    __metadata("design:type", String)
], StreamQueryDto.prototype, "access_token", void 0);
//# sourceMappingURL=conversation.dto.js.map