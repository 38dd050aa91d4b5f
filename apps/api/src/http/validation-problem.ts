import { ValidationError } from 'class-validator';
import { FieldError, problem, ProblemException } from './problem.exception';

/** class-validator's findings as one validation_failed problem, a field error per broken rule. */
export function validationProblem(errors: ValidationError[]): ProblemException {
  const fieldErrors = errors.flatMap((e) => flatten(e, ''));
  return problem('validation_failed', fieldErrors.map((e) => e.message).join('; '), { errors: fieldErrors });
}

function flatten(error: ValidationError, parent: string): FieldError[] {
  const field = parent ? `${parent}.${error.property}` : error.property;
  const own = Object.values(error.constraints ?? {}).map((message) => ({
    field,
    message: parent ? `${parent}.${message}` : message,
  }));
  return [...own, ...(error.children ?? []).flatMap((child) => flatten(child, field))];
}
