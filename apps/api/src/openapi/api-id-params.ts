import { applyDecorators } from '@nestjs/common';
import { ApiParam } from '@nestjs/swagger';

/** Path ids the route parses as UUIDs (400 validation_failed otherwise), documented as such. */
export const ApiIdParams = (...names: string[]): MethodDecorator =>
  applyDecorators(...names.map((name) => ApiParam({ name, type: String, format: 'uuid' })));
