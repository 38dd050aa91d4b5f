import { ParseUUIDPipe } from '@nestjs/common';
import { invalid } from './problem.exception';

/** A path parameter that must be a UUID: 400 validation_failed naming the parameter otherwise. */
export const Uuid = (name: string) =>
  new ParseUUIDPipe({ version: undefined, exceptionFactory: () => invalid(name, `${name} must be a UUID`) });
