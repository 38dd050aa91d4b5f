import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { IsIn, IsNumber, IsOptional, Max, Min, ValidateIf } from 'class-validator';
import { UsageDto, UsageQueryDto } from '../usage/usage.dto';

export const GROUPINGS = ['reader', 'model', 'day'] as const;
export type Grouping = (typeof GROUPINGS)[number];

export class TenantUsageQueryDto extends UsageQueryDto {
  @ApiPropertyOptional({
    enum: GROUPINGS,
    default: 'reader',
    description: 'one group per reader (their `sub`), per model, or per day (UTC, YYYY-MM-DD)',
  })
  @IsOptional()
  @IsIn(GROUPINGS)
  groupBy?: Grouping;
}

export class TenantUsageGroupDto extends UsageDto {
  @ApiProperty({ description: "the group's reader id, model or day (YYYY-MM-DD, UTC)" }) key!: string;
}

export class TenantUsageDto {
  @ApiProperty({ description: "the admin's tenant (their token's parley_tenant)" }) tenant!: string;
  @ApiProperty({ enum: GROUPINGS }) groupBy!: Grouping;
  @ApiProperty({ type: 'string', format: 'date-time', nullable: true }) from!: string | null;
  @ApiProperty({ type: 'string', format: 'date-time', nullable: true }) to!: string | null;
  @ApiProperty({ type: UsageDto, description: "the tenant's readers together" }) total!: UsageDto;
  @ApiProperty({ type: [TenantUsageGroupDto], description: 'ordered by key' }) groups!: TenantUsageGroupDto[];
}

export const MONTHLY_USD_MAX = 1_000_000_000;

/** A budget an admin sets: a number of USD per calendar month (UTC), or null to lift it. */
export class SetBudgetDto {
  @ApiProperty({
    type: 'number',
    nullable: true,
    minimum: 0,
    maximum: MONTHLY_USD_MAX,
    description: 'USD per calendar month (UTC); 0 stops all spending; null lifts the budget',
  })
  @ValidateIf((_, v) => v !== null)
  @IsNumber({ allowNaN: false, allowInfinity: false })
  @Min(0)
  @Max(MONTHLY_USD_MAX)
  monthlyUsd!: number | null;
}

export class AdminBudgetDto {
  @ApiProperty() tenant!: string;
  @ApiProperty({ type: 'number', nullable: true, description: 'the budget the admin set; null: none' })
  monthlyUsd!: number | null;
  @ApiProperty({ description: 'USD spent this month (UTC), from the usage ledger' }) spentUsd!: number;
  @ApiProperty({ type: 'number', nullable: true, description: 'USD left this month (0 once spent); null: no budget' })
  leftUsd!: number | null;
  @ApiProperty({ format: 'date-time' }) periodStart!: string;
  @ApiProperty({ format: 'date-time' }) resetsAt!: string;
}

export class ReaderAdminBudgetDto extends AdminBudgetDto {
  @ApiProperty({ description: "the reader's id (their token's sub)" }) userId!: string;
}
