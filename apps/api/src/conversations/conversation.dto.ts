import { applyDecorators } from '@nestjs/common';
import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { Type } from 'class-transformer';
import { RETRIEVAL_MODES, RetrievalMode } from '@parley/conversation';
import {
  ArrayMaxSize,
  ArrayMinSize,
  ArrayUnique,
  IsArray,
  IsBoolean,
  IsIn,
  IsInt,
  IsOptional,
  IsString,
  IsUUID,
  Matches,
  Max,
  MaxLength,
  Min,
  MinLength,
  ValidateIf,
  ValidateNested,
} from 'class-validator';

export const TITLE_MAX = 200;
export const SELECTED_TEXT_MAX = 5_000;
/** hard ceiling; the configurable limit (MESSAGE_MAX_CHARS) is checked by the service */
export const CONTENT_HARD_MAX = 200_000;

export const BOOKS_PER_CONVERSATION_MAX = 20;

/** Not blank: the OpenAPI pattern for what assertMessageText refuses (whitespace only). */
export const NOT_BLANK = '\\S';

/** An optional list of distinct book ids, at most BOOKS_PER_CONVERSATION_MAX; absent, not null. */
function BookIdsProperty(description: string): PropertyDecorator {
  return applyDecorators(
    ApiPropertyOptional({
      type: 'array',
      items: { type: 'string', format: 'uuid' },
      maxItems: BOOKS_PER_CONVERSATION_MAX,
      uniqueItems: true,
      description,
    }),
    ValidateIf((_, v) => v !== undefined),
    IsArray(),
    ArrayMaxSize(BOOKS_PER_CONVERSATION_MAX),
    ArrayUnique(),
    IsUUID(undefined, { each: true }),
  );
}

export class CreateConversationDto {
  @ApiPropertyOptional({ format: 'uuid', description: 'one book: the shorthand for bookIds: [bookId]' })
  @IsOptional()
  @IsUUID()
  bookId?: string;

  @BookIdsProperty("the conversation's books; the agent searches them all")
  bookIds?: string[];

  @ApiPropertyOptional({ minLength: 1, maxLength: TITLE_MAX })
  @IsOptional()
  @IsString()
  @MinLength(1)
  @MaxLength(TITLE_MAX)
  title?: string;

  @ApiPropertyOptional({
    type: 'integer',
    minimum: 0,
    maximum: 100_000,
    description: 'highest chapter index the reader has reached; null for no limit',
    nullable: true,
  })
  @IsOptional()
  @ValidateIf((_, v) => v !== null)
  @IsInt()
  @Min(0)
  @Max(100_000)
  readingPosition?: number | null;
}

export const POLICY_INSTRUCTIONS_MAX = 2_000;
export const POLICY_BUDGET_MIN = 2_000;
export const POLICY_BUDGET_MAX = 200_000;
export const MODEL_ID = /^[a-z0-9][a-z0-9._-]{0,99}$/;

/** A change of a conversation's policy: a field given sets it, null returns it to the server's default. */
export class PolicyPatchDto {
  @ApiPropertyOptional({
    type: String,
    nullable: true,
    pattern: MODEL_ID.source,
    description:
      'a model id the server prices (e.g. claude-sonnet-5-5, claude-haiku-4-5), or the server default LLM_MODEL',
  })
  @IsOptional()
  @ValidateIf((_, v) => v !== null)
  @IsString()
  @Matches(MODEL_ID, { message: 'model must be a model id such as claude-sonnet-5-5' })
  model?: string | null;

  @ApiPropertyOptional({
    type: 'integer',
    minimum: 1,
    nullable: true,
    description: 'model calls a turn may make; at most the server cap AGENT_MAX_ITERATIONS',
  })
  @IsOptional()
  @ValidateIf((_, v) => v !== null)
  @IsInt()
  @Min(1)
  maxIterations?: number | null;

  @ApiPropertyOptional({ enum: RETRIEVAL_MODES, nullable: true })
  @IsOptional()
  @ValidateIf((_, v) => v !== null)
  @IsIn(RETRIEVAL_MODES)
  retrievalMode?: RetrievalMode | null;

  @ApiPropertyOptional({ type: 'integer', minimum: POLICY_BUDGET_MIN, maximum: POLICY_BUDGET_MAX, nullable: true })
  @IsOptional()
  @ValidateIf((_, v) => v !== null)
  @IsInt()
  @Min(POLICY_BUDGET_MIN)
  @Max(POLICY_BUDGET_MAX)
  contextBudgetTokens?: number | null;

  @ApiPropertyOptional({
    type: String,
    minLength: 1,
    maxLength: POLICY_INSTRUCTIONS_MAX,
    nullable: true,
    description: 'appended to the system prompt of every turn posted after the change',
  })
  @IsOptional()
  @ValidateIf((_, v) => v !== null)
  @IsString()
  @MinLength(1)
  @MaxLength(POLICY_INSTRUCTIONS_MAX)
  instructions?: string | null;
}

export class UpdateConversationDto {
  @ApiPropertyOptional({ minLength: 1, maxLength: TITLE_MAX })
  @IsOptional()
  @IsString()
  @MinLength(1)
  @MaxLength(TITLE_MAX)
  title?: string;

  @ApiPropertyOptional({ type: 'integer', minimum: 0, maximum: 100_000, nullable: true })
  @IsOptional()
  @ValidateIf((_, v) => v !== null)
  @IsInt()
  @Min(0)
  @Max(100_000)
  readingPosition?: number | null;

  @BookIdsProperty("the conversation's books from now on, the whole list (SourcesChanged)")
  bookIds?: string[];

  @ApiPropertyOptional({ type: PolicyPatchDto, description: "the conversation's settings (PolicyChanged)" })
  @IsOptional()
  @ValidateNested()
  @Type(() => PolicyPatchDto)
  policy?: PolicyPatchDto;
}

export class PostMessageDto {
  @ApiProperty({
    minLength: 1,
    maxLength: CONTENT_HARD_MAX,
    pattern: NOT_BLANK,
    description: 'not blank, at most MESSAGE_MAX_CHARS characters (16,000 by default; 400 validation_failed beyond)',
  })
  @IsString()
  @MinLength(1)
  @MaxLength(CONTENT_HARD_MAX)
  content!: string;

  @ApiPropertyOptional({
    minLength: 1,
    maxLength: SELECTED_TEXT_MAX,
    description: 'the passage the reader highlighted',
  })
  @IsOptional()
  @IsString()
  @MinLength(1)
  @MaxLength(SELECTED_TEXT_MAX)
  selectedText?: string;
}

/** POST …/turns/:turnId/approvals: the reader's answer to a tool call that waits for it. */
export class ToolApprovalDto {
  @ApiProperty({
    minLength: 1,
    maxLength: 200,
    description: 'the call waiting for approval, as its ToolApprovalRequested names it (`toolCallId`)',
  })
  @IsString()
  @MinLength(1)
  @MaxLength(200)
  toolCallId!: string;

  @ApiProperty({ description: 'true: the call is made; false: it is not, and the model reads that it was declined' })
  @IsBoolean()
  approved!: boolean;

  @ApiPropertyOptional({ minLength: 1, maxLength: 1000, description: 'why; the model reads it with a denial' })
  @IsOptional()
  @IsString()
  @MinLength(1)
  @MaxLength(1000)
  reason?: string;
}

export const BATCH_PROMPTS_MAX = 50;

export class StartBatchDto {
  @ApiProperty({
    type: 'array',
    items: { type: 'string', minLength: 1, maxLength: CONTENT_HARD_MAX, pattern: NOT_BLANK },
    minItems: 1,
    maxItems: BATCH_PROMPTS_MAX,
    description: 'the prompts, each not blank and at most MESSAGE_MAX_CHARS characters',
  })
  @IsArray()
  @ArrayMinSize(1)
  @ArrayMaxSize(BATCH_PROMPTS_MAX)
  @IsString({ each: true })
  @MaxLength(CONTENT_HARD_MAX, { each: true })
  prompts!: string[];

  @ApiProperty({
    enum: ['sequential', 'independent'],
    description:
      "sequential: the conversation's next turns, in order, each seeing the answers before it; independent: each " +
      'prompt answered against the current history in a fork of its own, concurrently',
  })
  @IsIn(['sequential', 'independent'])
  mode!: 'sequential' | 'independent';

  @ApiPropertyOptional({
    enum: ['messages', 'message-batches'],
    default: 'messages',
    description:
      "messages: answers in seconds. message-batches (independent only, Anthropic only): the answers' model calls go " +
      "through the provider's Message Batches API, at half the price, answered within 24 hours",
  })
  @IsOptional()
  @IsIn(['messages', 'message-batches'])
  via?: 'messages' | 'message-batches';
}

export class PostMessageQueryDto {
  @ApiPropertyOptional({ enum: ['enqueue', 'reject', 'interrupt'], default: 'enqueue' })
  @IsOptional()
  @IsIn(['enqueue', 'reject', 'interrupt'])
  multitask?: 'enqueue' | 'reject' | 'interrupt';
}

export class ForkConversationDto {
  @ApiProperty({ type: 'integer', minimum: 1, maximum: 2 ** 31 - 1 })
  @IsInt()
  @Min(1)
  @Max(2 ** 31 - 1)
  version!: number;
}

export class ListConversationsQueryDto {
  @ApiPropertyOptional({ format: 'uuid' })
  @IsOptional()
  @IsUUID()
  bookId?: string;

  @ApiPropertyOptional({ type: 'integer', minimum: 1, maximum: 100, default: 20 })
  @IsOptional()
  @Type(() => Number)
  @IsInt()
  @Min(1)
  @Max(100)
  limit?: number;

  @ApiPropertyOptional()
  @IsOptional()
  @IsString()
  @MaxLength(500)
  cursor?: string;
}

export class PageQueryDto {
  @ApiPropertyOptional({ type: 'integer', minimum: 1, maximum: 500, default: 100 })
  @IsOptional()
  @Type(() => Number)
  @IsInt()
  @Min(1)
  @Max(500)
  limit?: number;

  @ApiPropertyOptional()
  @IsOptional()
  @IsString()
  @MaxLength(500)
  cursor?: string;
}

export class EventsQueryDto {
  @ApiPropertyOptional({
    type: 'integer',
    minimum: 0,
    maximum: 2 ** 31 - 1,
    default: 0,
    description: 'return events with version > after',
  })
  @IsOptional()
  @Type(() => Number)
  @IsInt()
  @Min(0)
  @Max(2 ** 31 - 1)
  after?: number;

  @ApiPropertyOptional({ type: 'integer', minimum: 1, maximum: 1000, default: 1000 })
  @IsOptional()
  @Type(() => Number)
  @IsInt()
  @Min(1)
  @Max(1000)
  limit?: number;
}

export class ShowConversationQueryDto {
  @ApiPropertyOptional({
    type: 'integer',
    minimum: 1,
    maximum: 2 ** 31 - 1,
    description: 'the state folded from events 1..version',
  })
  @IsOptional()
  @Type(() => Number)
  @IsInt()
  @Min(1)
  @Max(2 ** 31 - 1)
  version?: number;
}

export class StreamQueryDto extends EventsQueryDto {
  @ApiPropertyOptional({ description: 'bearer token, for EventSource clients that cannot set headers' })
  @IsOptional()
  @IsString()
  access_token?: string;
}
