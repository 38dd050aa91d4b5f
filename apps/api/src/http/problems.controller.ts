import { Controller, Get, Param } from '@nestjs/common';
import { ApiOkResponse, ApiOperation, ApiParam, ApiProperty, ApiTags } from '@nestjs/swagger';
import { Public } from '../auth/auth.guard';
import { ApiProblems } from '../openapi/api-problems';
import { PROBLEM_CATALOGUE, PROBLEM_CODES, ProblemCode } from './problem-catalogue';
import { problem } from './problem.exception';

export class ProblemKindDto {
  @ApiProperty({ enum: PROBLEM_CODES, enumName: 'ProblemCode' }) code!: string;
  @ApiProperty() status!: number;
  @ApiProperty() title!: string;
  @ApiProperty() description!: string;
}

export class ProblemKindListDto {
  @ApiProperty({ type: [ProblemKindDto] }) items!: ProblemKindDto[];
}

/** The problem catalogue, where each problem's `type` URI (/problems/{code}) leads. */
@ApiTags('operations')
@Public()
@Controller('problems')
export class ProblemsController {
  @Get()
  @ApiOperation({ summary: 'Every kind of error the API answers with, by its stable code' })
  @ApiOkResponse({ type: ProblemKindListDto })
  list(): ProblemKindListDto {
    return { items: PROBLEM_CODES.map(kindOf) };
  }

  @Get(':code')
  @ApiOperation({ summary: "One kind of error: a problem's `type` URI" })
  @ApiParam({ name: 'code', enum: PROBLEM_CODES, enumName: 'ProblemCode', description: 'any other is 404 not_found' })
  @ApiOkResponse({ type: ProblemKindDto })
  @ApiProblems('not_found', 'internal_error')
  show(@Param('code') code: string): ProblemKindDto {
    if (!Object.hasOwn(PROBLEM_CATALOGUE, code)) throw problem('not_found', `no problem kind ${code}`);
    return kindOf(code as ProblemCode);
  }
}

function kindOf(code: ProblemCode): ProblemKindDto {
  return { code, ...PROBLEM_CATALOGUE[code] };
}
