import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { Type } from 'class-transformer';
import { IsIn, IsInt, IsOptional, IsString, IsUUID, Max, MaxLength, Min, MinLength, ValidateIf } from 'class-validator';

export const TITLE_MAX = 200;
export const SELECTED_TEXT_MAX = 5_000;
/** hard ceiling; the configurable limit (MESSAGE_MAX_CHARS) is checked by the service */
export const CONTENT_HARD_MAX = 200_000;

export class CreateConversationDto {
  @ApiPropertyOptional({ format: 'uuid' })
  @IsOptional()
  @IsUUID()
  bookId?: string;

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
}

export class PostMessageDto {
  @ApiProperty({
    minLength: 1,
    maxLength: CONTENT_HARD_MAX,
    description: 'at most MESSAGE_MAX_CHARS characters (16,000 by default; 400 validation_failed beyond)',
  })
  @IsString()
  @MinLength(1)
  @MaxLength(CONTENT_HARD_MAX)
  content!: string;

  @ApiPropertyOptional({ maxLength: SELECTED_TEXT_MAX, description: 'the passage the reader highlighted' })
  @IsOptional()
  @IsString()
  @MinLength(1)
  @MaxLength(SELECTED_TEXT_MAX)
  selectedText?: string;
}

export class PostMessageQueryDto {
  @ApiPropertyOptional({ enum: ['enqueue', 'reject', 'interrupt'], default: 'enqueue' })
  @IsOptional()
  @IsIn(['enqueue', 'reject', 'interrupt'])
  multitask?: 'enqueue' | 'reject' | 'interrupt';
}

export class ForkConversationDto {
  @ApiProperty({ minimum: 1 })
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

  @ApiPropertyOptional({ minimum: 1, maximum: 100, default: 20 })
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
  @ApiPropertyOptional({ minimum: 1, maximum: 500, default: 100 })
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
  @ApiPropertyOptional({ minimum: 0, default: 0, description: 'return events with version > after' })
  @IsOptional()
  @Type(() => Number)
  @IsInt()
  @Min(0)
  @Max(2 ** 31 - 1)
  after?: number;

  @ApiPropertyOptional({ minimum: 1, maximum: 1000, default: 1000 })
  @IsOptional()
  @Type(() => Number)
  @IsInt()
  @Min(1)
  @Max(1000)
  limit?: number;
}

export class ShowConversationQueryDto {
  @ApiPropertyOptional({ minimum: 1, description: 'the state folded from events 1..version' })
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
