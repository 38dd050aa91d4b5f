import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { IsISO8601, IsOptional } from 'class-validator';

export class ModelUsageDto {
  @ApiProperty({ description: 'turns that ended (answered, failed or cancelled)' }) turns!: number;
  @ApiProperty() toolCalls!: number;
  @ApiProperty({ description: 'turns that ended TurnFailed' }) failures!: number;
  @ApiProperty() inputTokens!: number;
  @ApiProperty() outputTokens!: number;
  @ApiProperty() cacheReadInputTokens!: number;
  @ApiProperty() cacheCreationInputTokens!: number;
  @ApiProperty({ description: 'USD, from the per-model price table' }) costUsd!: number;
  @ApiProperty({ description: 'cache reads / all input tokens (uncached, cache reads and writes); 0 with none' })
  cacheHitRate!: number;
}

export class UsageDto extends ModelUsageDto {
  @ApiProperty({
    type: 'object',
    additionalProperties: { $ref: '#/components/schemas/ModelUsageDto' },
    description: 'the same figures per model (turns without a model answer are in the totals only)',
  })
  byModel!: Record<string, ModelUsageDto>;
}

export class BudgetDto {
  @ApiProperty({
    type: 'number',
    nullable: true,
    description:
      "the reader's budget for the month in USD: the one their tenant's admin set, else the token's " +
      "parley_budget_usd_per_month, else the server's; null: none",
  })
  limitUsd!: number | null;
  @ApiProperty({ description: 'USD spent this month (UTC), as costUsd counts it' }) spentUsd!: number;
  @ApiProperty({ type: 'number', nullable: true, description: 'USD left this month (0 once spent); null: no budget' })
  leftUsd!: number | null;
  @ApiProperty({ format: 'date-time', description: 'the start of this month (UTC)' }) periodStart!: string;
  @ApiProperty({ format: 'date-time', description: 'the start of next month (UTC), when the spend starts again at 0' })
  resetsAt!: string;
}

export class ReaderUsageDto extends UsageDto {
  @ApiProperty({
    type: BudgetDto,
    description: "this calendar month's budget, whatever from and to say; posting is refused once spentUsd ≥ limitUsd",
  })
  budget!: BudgetDto;
}

export class UsageQueryDto {
  @ApiPropertyOptional({ format: 'date-time', description: 'count events at or after this instant' })
  @IsOptional()
  @IsISO8601({ strict: true })
  from?: string;

  @ApiPropertyOptional({ format: 'date-time', description: 'count events before this instant' })
  @IsOptional()
  @IsISO8601({ strict: true })
  to?: string;
}
