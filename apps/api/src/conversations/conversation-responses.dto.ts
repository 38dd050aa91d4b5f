import { ApiProperty, ApiPropertyOptional, ApiPropertyOptions, getSchemaPath } from '@nestjs/swagger';
import { RETRIEVAL_MODES, RetrievalMode } from '@parley/conversation';

/** OpenAPI shapes of the conversation routes' answers (what the services return, as served). */
/**
 * `forkedFrom`, inline rather than a $ref: OpenAPI 3.0's `nullable` does not reach into allOf,
 * so validators refuse null for a nullable reference.
 */
const FORKED_FROM: ApiPropertyOptions = {
  type: 'object',
  nullable: true,
  additionalProperties: false,
  required: ['conversationId', 'version'],
  properties: { conversationId: { type: 'string', format: 'uuid' }, version: { type: 'integer' } },
  description: 'the conversation and version this one was forked from; null when not a fork',
};

export class TurnDto {
  @ApiProperty({ format: 'uuid' }) turnId!: string;
  @ApiProperty({ format: 'uuid' }) messageId!: string;
  @ApiProperty({ enum: ['pending', 'replied', 'failed', 'cancelled'] }) status!: string;
}

export class PolicyDto {
  @ApiPropertyOptional({ description: "the model of the conversation's calls" }) model?: string;
  @ApiPropertyOptional({ type: 'integer' }) maxIterations?: number;
  @ApiPropertyOptional({ enum: RETRIEVAL_MODES }) retrievalMode?: RetrievalMode;
  @ApiPropertyOptional({ type: 'integer' }) contextBudgetTokens?: number;
  @ApiPropertyOptional() instructions?: string;
}

export class ConversationDto {
  @ApiProperty({ format: 'uuid' }) id!: string;
  @ApiProperty({ type: String, format: 'uuid', nullable: true, description: 'the first of bookIds' })
  bookId!: string | null;
  @ApiProperty({ type: [String], format: 'uuid', description: 'the books the agent searches' }) bookIds!: string[];
  @ApiProperty({ type: String, nullable: true }) title!: string | null;
  @ApiProperty({ type: Number, nullable: true, description: 'highest chapter index the agent may quote from' })
  readingPosition!: number | null;
  @ApiProperty(FORKED_FROM) forkedFrom!: { conversationId: string; version: number } | null;
  @ApiProperty({
    type: PolicyDto,
    description: 'the settings a PATCH set (PolicyChanged); a field left out follows the server configuration',
  })
  policy!: PolicyDto;
  @ApiProperty({ description: 'the stream version this state is folded up to (the ETag for If-Match)' })
  version!: number;
  @ApiProperty() messageCount!: number;
  @ApiProperty({ type: [TurnDto], description: 'every turn, in posting order' }) turns!: TurnDto[];
  @ApiProperty({ type: String, format: 'date-time', nullable: true }) createdAt!: string | null;
  @ApiProperty({ type: String, format: 'date-time', nullable: true }) lastActivityAt!: string | null;
}

export class ConversationSummaryDto {
  @ApiProperty({ format: 'uuid' }) id!: string;
  @ApiProperty({ type: String, format: 'uuid', nullable: true }) bookId!: string | null;
  @ApiProperty({ type: [String], format: 'uuid' }) bookIds!: string[];
  @ApiProperty({ type: String, nullable: true }) title!: string | null;
  @ApiProperty({ type: Number, nullable: true }) readingPosition!: number | null;
  @ApiProperty(FORKED_FROM) forkedFrom!: { conversationId: string; version: number } | null;
  @ApiProperty() version!: number;
  @ApiProperty() messageCount!: number;
  @ApiProperty({ format: 'date-time' }) createdAt!: string;
  @ApiProperty({ format: 'date-time' }) lastActivityAt!: string;
}

export class ConversationListDto {
  @ApiProperty({ type: [ConversationSummaryDto] }) items!: ConversationSummaryDto[];
  @ApiProperty({ type: String, nullable: true, description: 'pass as ?cursor= for the next page; null at the end' })
  nextCursor!: string | null;
}

export class ToolInvocationDto {
  @ApiProperty() toolUseId!: string;
  @ApiProperty() name!: string;
  @ApiProperty({ type: 'object', additionalProperties: true, description: "the tool's input as the model wrote it" })
  input!: Record<string, unknown>;
}

export class MessageDto {
  @ApiProperty({ description: "the message's id (a tool result's is its tool call's id)" }) id!: string;
  @ApiProperty({ format: 'uuid' }) conversationId!: string;
  @ApiProperty({ description: 'the version of the event that wrote it' }) version!: number;
  @ApiProperty({ enum: ['user', 'assistant', 'tool_result'] }) role!: string;
  @ApiProperty({ format: 'uuid' }) turnId!: string;
  @ApiProperty() content!: string;
  @ApiProperty({ type: String, nullable: true }) selectedText!: string | null;
  @ApiProperty({ type: [ToolInvocationDto] }) toolInvocations!: ToolInvocationDto[];
  @ApiProperty({ type: 'array', items: { $ref: '#/components/schemas/Citation' } }) citations!: unknown[];
  @ApiProperty({ type: String, nullable: true }) model!: string | null;
  @ApiProperty({
    type: 'object',
    nullable: true,
    description: 'tokens of the reply (the Usage of AssistantReplied); null on user and tool_result messages',
    properties: Object.fromEntries(
      ['inputTokens', 'outputTokens', 'cacheReadInputTokens', 'cacheCreationInputTokens'].map((k) => [
        k,
        { type: 'integer' },
      ]),
    ),
  })
  usage!: unknown;
  @ApiProperty({ type: Number, nullable: true }) costUsd!: number | null;
  @ApiProperty({ type: Boolean, nullable: true }) isError!: boolean | null;
  @ApiProperty({ format: 'date-time' }) createdAt!: string;
}

export class MessageListDto {
  @ApiProperty({ type: [MessageDto] }) items!: MessageDto[];
  @ApiProperty({ type: String, nullable: true }) nextCursor!: string | null;
}

export class PostedMessageDto {
  @ApiProperty({ format: 'uuid' }) messageId!: string;
  @ApiProperty({ format: 'uuid', description: 'the turn that answers it; its events carry it as correlationId' })
  turnId!: string;
  @ApiProperty({ description: 'the stream version of the UserMessagePosted event' }) version!: number;
  @ApiProperty({ description: 'its global position in the log (bigint as a string)' }) position!: string;
}

export class CancelResultDto {
  @ApiProperty({ format: 'uuid' }) turnId!: string;
  @ApiProperty({ description: 'false when the turn had already ended (nothing appended)' }) cancelled!: boolean;
}

export class ToolApprovalResultDto {
  @ApiProperty({ format: 'uuid' }) turnId!: string;
  @ApiProperty() toolCallId!: string;
  @ApiProperty() approved!: boolean;
  @ApiProperty({ description: "the conversation's version after ToolApprovalDecided" }) version!: number;
}

export class EventPageDto {
  @ApiProperty({ type: 'array', items: { $ref: getSchemaPath('ConversationEventEnvelope') } })
  items!: unknown[];
  @ApiProperty({
    type: String,
    nullable: true,
    pattern: '^\\d{1,10}$',
    description:
      "the last version of this page, in decimal digits (a string, as every page's cursor): pass it as ?after= for " +
      'the next page (a typed client: Number(nextCursor)); null at the end',
  })
  nextCursor!: string | null;
}

export class BatchStartedDto {
  @ApiProperty({ format: 'uuid' }) batchId!: string;
}

export class BatchItemDto {
  @ApiProperty() prompt!: string;
  @ApiProperty({ format: 'uuid', description: 'where the turn runs: this conversation, or its fork (independent)' })
  conversationId!: string;
  @ApiProperty({ format: 'uuid' }) turnId!: string;
  @ApiProperty({ enum: ['pending', 'replied', 'failed', 'cancelled'] }) status!: string;
  @ApiPropertyOptional() answer?: string;
  @ApiPropertyOptional({ type: 'array', items: { type: 'object' } }) citations?: unknown[];
  @ApiPropertyOptional({ type: 'object', additionalProperties: { type: 'number' } }) usage?: Record<string, number>;
  @ApiPropertyOptional() costUsd?: number;
  @ApiPropertyOptional() latencyMs?: number;
}

export class BatchMetricsDto {
  @ApiProperty() turns!: number;
  @ApiProperty() failures!: number;
  @ApiProperty() inputTokens!: number;
  @ApiProperty() outputTokens!: number;
  @ApiProperty() cacheReadInputTokens!: number;
  @ApiProperty() cacheCreationInputTokens!: number;
  @ApiProperty() costUsd!: number;
  @ApiProperty({ type: Number, nullable: true }) latencyMsP50!: number | null;
  @ApiProperty({ type: Number, nullable: true }) latencyMsP95!: number | null;
}

export class BatchDto {
  @ApiProperty({ format: 'uuid' }) batchId!: string;
  @ApiProperty({ enum: ['sequential', 'independent'] }) mode!: string;
  @ApiProperty({ enum: ['messages', 'message-batches'] }) via!: string;
  @ApiProperty({ enum: ['running', 'completed', 'failed'], description: 'failed: completed with no prompt answered' })
  status!: string;
  @ApiProperty({ type: [BatchItemDto] }) items!: BatchItemDto[];
  @ApiProperty({ type: BatchMetricsDto }) metrics!: BatchMetricsDto;
}
