import { applyDecorators } from '@nestjs/common';
import { ApiProduces, ApiResponse } from '@nestjs/swagger';

/**
 * A Server-Sent Events answer: 200 text/event-stream, frames as `description` says. OpenAPI 3.0
 * cannot type the frames themselves; their data schemas are named in the description.
 */
export function ApiEventStream(description: string): MethodDecorator {
  return applyDecorators(
    ApiProduces('text/event-stream'),
    ApiResponse({
      status: 200,
      description,
      content: { 'text/event-stream': { schema: { type: 'string', description: 'SSE frames (text/event-stream)' } } },
    }),
  );
}
