import { applyDecorators } from '@nestjs/common';
import { ApiBody, ApiConsumes, ApiExtension } from '@nestjs/swagger';
import type { OpenAPIObject } from '@nestjs/swagger';
import type { ReferenceObject, SchemaObject } from '@nestjs/swagger/dist/interfaces/open-api-spec.interface';

const EXTENSION = 'x-parley-body-by-media-type';

type Schemas = Record<string, SchemaObject | ReferenceObject>;

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
      const extended = operation as unknown as Record<string, unknown> | undefined;
      const schemas = extended?.[EXTENSION] as Schemas | undefined;
      if (!operation || !extended || !schemas) continue;
      delete extended[EXTENSION];
      operation.requestBody = {
        required: true,
        content: Object.fromEntries(Object.entries(schemas).map(([type, schema]) => [type, { schema }])),
      };
    }
  }
}
