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
exports.EventEnvelopeDto = exports.EventMetadataDto = void 0;
const swagger_1 = require("@nestjs/swagger");
/** OpenAPI description of the event envelope (DESIGN.md "Events"). */
class EventMetadataDto {
}
exports.EventMetadataDto = EventMetadataDto;
__decorate([
    (0, swagger_1.ApiProperty)(),
    __metadata("design:type", String)
], EventMetadataDto.prototype, "userId", void 0);
__decorate([
    (0, swagger_1.ApiProperty)({ required: false, description: 'the turn id for agent events' }),
    __metadata("design:type", String)
], EventMetadataDto.prototype, "correlationId", void 0);
__decorate([
    (0, swagger_1.ApiProperty)({ required: false, description: 'the event that caused this one' }),
    __metadata("design:type", String)
], EventMetadataDto.prototype, "causationId", void 0);
class EventEnvelopeDto {
}
exports.EventEnvelopeDto = EventEnvelopeDto;
__decorate([
    (0, swagger_1.ApiProperty)({ format: 'uuid' }),
    __metadata("design:type", String)
], EventEnvelopeDto.prototype, "id", void 0);
__decorate([
    (0, swagger_1.ApiProperty)({
        enum: [
            'ConversationStarted',
            'ConversationRenamed',
            'ReadingPositionChanged',
            'UserMessagePosted',
            'ToolInvoked',
            'ToolResultRecorded',
            'AssistantReplied',
            'TurnFailed',
            'TurnCancelled',
            'ConversationDeleted',
        ],
    }),
    __metadata("design:type", String)
], EventEnvelopeDto.prototype, "type", void 0);
__decorate([
    (0, swagger_1.ApiProperty)({ format: 'uuid' }),
    __metadata("design:type", String)
], EventEnvelopeDto.prototype, "conversationId", void 0);
__decorate([
    (0, swagger_1.ApiProperty)({ description: 'version within the stream, from 1; the SSE id' }),
    __metadata("design:type", Number)
], EventEnvelopeDto.prototype, "version", void 0);
__decorate([
    (0, swagger_1.ApiProperty)({ description: 'global order in the log (bigint as a string)' }),
    __metadata("design:type", String)
], EventEnvelopeDto.prototype, "position", void 0);
__decorate([
    (0, swagger_1.ApiProperty)({ format: 'date-time' }),
    __metadata("design:type", String)
], EventEnvelopeDto.prototype, "occurredAt", void 0);
__decorate([
    (0, swagger_1.ApiProperty)({ type: 'object', additionalProperties: true }),
    __metadata("design:type", Object)
], EventEnvelopeDto.prototype, "data", void 0);
__decorate([
    (0, swagger_1.ApiProperty)({ type: EventMetadataDto }),
    __metadata("design:type", EventMetadataDto)
], EventEnvelopeDto.prototype, "metadata", void 0);
//# sourceMappingURL=event-envelope.dto.js.map