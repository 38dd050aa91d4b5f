import { applyDecorators } from '@nestjs/common';
import { ApiProduces, ApiResponse } from '@nestjs/swagger';

/**
 * A Server-Sent Events answer: 200 text/event-stream, frames as `description` says. OpenAPI 3.0
 * cannot type a stream's items; `frames` names the schema of one frame (event-schemas.ts's
 * streamFrameSchemas), given as `x-itemSchema`, OpenAPI 3.2's `itemSchema`.
 */
export function ApiEventStream(description: string, frames?: string): MethodDecorator {
  return applyDecorators(
    ApiProduces('text/event-stream'),
    ApiResponse({
      status: 200,
      description,
      content: {
        'text/event-stream': {
          schema: { type: 'string', description: 'SSE frames (text/event-stream)' },
          ...(frames ? { 'x-itemSchema': { $ref: `#/components/schemas/${frames}` } } : {}),
        },
      },
    }),
  );
}
