import { ApiProperty } from '@nestjs/swagger';
import { CONVERSATION_EVENT_TYPES } from '@parley/conversation';

/** OpenAPI description of the event envelope (docs/events.md). */
export class EventMetadataDto {
  @ApiProperty() userId!: string;
  @ApiProperty({ required: false, description: 'the turn id for agent events' }) correlationId?: string;
  @ApiProperty({ required: false, description: 'the event that caused this one' }) causationId?: string;
}

export class EventEnvelopeDto {
  @ApiProperty({ format: 'uuid' }) id!: string;
  @ApiProperty({ enum: CONVERSATION_EVENT_TYPES })
  type!: string;
  @ApiProperty({ format: 'uuid' }) conversationId!: string;
  @ApiProperty({ description: 'version within the stream, from 1; the SSE id' }) version!: number;
  @ApiProperty({ description: 'global order in the log (bigint as a string)' }) position!: string;
  @ApiProperty({ format: 'date-time' }) occurredAt!: string;
  @ApiProperty({ type: 'object', additionalProperties: true }) data!: Record<string, unknown>;
  @ApiProperty({ type: EventMetadataDto }) metadata!: EventMetadataDto;
}
