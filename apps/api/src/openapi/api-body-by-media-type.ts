import { applyDecorators } from '@nestjs/common';
import { ApiBody, ApiConsumes, ApiExtension } from '@nestjs/swagger';
import type { OpenAPIObject } from '@nestjs/swagger';
import type {
  OperationObject,
  ReferenceObject,
  SchemaObject,
} from '@nestjs/swagger/dist/interfaces/open-api-spec.interface';

const EXTENSION = 'x-parley-body-by-media-type';

type Schemas = Record<string, SchemaObject | ReferenceObject>;

/** An operation ApiBodyByMediaType marked: the extension Nest wrote holds its schemas. */
type MarkedOperation = OperationObject & { [EXTENSION]?: Schemas };

const isMarked = (operation: OperationObject | undefined): operation is MarkedOperation =>
  operation !== undefined && EXTENSION in operation;

/**
 * A request body whose schema depends on its content type (JSON fields, or a multipart form with a
 * file). @ApiBody gives every content type one schema; this states each one's own, which
 * applyBodiesByMediaType writes into the document.
 */
export const ApiBodyByMediaType = (schemas: Schemas): MethodDecorator =>
  applyDecorators(
    ApiConsumes(...Object.keys(schemas)),
    ApiBody({ required: true, schema: { oneOf: Object.values(schemas) } }),
    ApiExtension(EXTENSION, schemas),
  );

/** Gives each operation marked by ApiBodyByMediaType one schema per content type. */
export function applyBodiesByMediaType(document: OpenAPIObject): void {
  for (const item of Object.values(document.paths)) {
    for (const operation of [item.get, item.put, item.post, item.patch, item.delete]) {
      if (!isMarked(operation)) continue;
      const schemas = operation[EXTENSION];
      delete operation[EXTENSION];
      if (!schemas) continue;
      operation.requestBody = {
        required: true,
        content: Object.fromEntries(Object.entries(schemas).map(([type, schema]) => [type, { schema }])),
      };
    }
  }
}
