import { ApiProperty } from '@nestjs/swagger';
import { CONVERSATION_EVENT_TYPES } from '@parley/conversation';

/** OpenAPI description of the event envelope (docs/events.md). */
export class EventMetadataDto {
  @ApiProperty() userId!: string;
  @ApiProperty({ required: false, description: 'the turn id for agent events' }) correlationId?: string;
  @ApiProperty({ required: false, description: 'the event that caused this one' }) causationId?: string;
  @ApiProperty({
    required: false,
    description:
      'W3C trace context of the span the event was written under, when tracing was on (docs/observability.md)',
    example: '00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01',
  })
  traceparent?: string;
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
