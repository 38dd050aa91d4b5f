import {
  BadRequestException,
  CallHandler,
  createParamDecorator,
  ExecutionContext,
  HttpException,
  Injectable,
  mixin,
  NestInterceptor,
  PayloadTooLargeException,
  Type,
} from '@nestjs/common';
import type { Multipart } from '@fastify/multipart';
import type { FastifyRequest } from 'fastify';
import { Observable } from 'rxjs';

/** The file of a multipart upload, read whole into memory (what `@UploadedFileBuffer()` gives the handler). */
export interface UploadedFileBuffer {
  fieldname: string;
  originalname: string;
  mimetype: string;
  buffer: Buffer;
  size: number;
}

export interface UploadLimits {
  fileSize: number;
  files: number;
  fields: number;
  /** text fields and files together */
  parts?: number;
}

const UPLOADED = Symbol('uploaded file');
type UploadingRequest = FastifyRequest & { [UPLOADED]?: UploadedFileBuffer };

/** The file FileUpload read, or undefined (not multipart, or no file sent). */
export const UploadedFileBuffer = createParamDecorator(
  (_: unknown, ctx: ExecutionContext) => ctx.switchToHttp().getRequest<UploadingRequest>()[UPLOADED],
);

/**
 * For a multipart request: its text fields become the body (validated as any body) and its one
 * file, under `field`, the handler's `@UploadedFileBuffer()`; any other request passes untouched. Limits and refusals answer
 * as they always have: 413 "File too large", 400 "Too many files", "Too many fields", "Unexpected
 * file field - <name>", "Multipart: …" for a malformed body.
 */
export function FileUpload(field: string, limits: UploadLimits): Type<NestInterceptor> {
  @Injectable()
  class FileUploadInterceptor implements NestInterceptor {
    async intercept(context: ExecutionContext, next: CallHandler): Promise<Observable<unknown>> {
      const req = context.switchToHttp().getRequest<UploadingRequest>();
      if (!req.isMultipart()) return next.handle();
      try {
        const { fields, file } = await readForm(req, field, limits);
        req.body = fields;
        req[UPLOADED] = file;
      } catch (e) {
        throw refusal(e);
      }
      return next.handle();
    }
  }
  return mixin(FileUploadInterceptor);
}

async function readForm(req: FastifyRequest, field: string, limits: UploadLimits) {
  if (req.headers['content-length'] === '0') throw new BadRequestException('Multipart: Unexpected end of form');
  const fields: Record<string, string | string[]> = {};
  let file: UploadedFileBuffer | undefined;
  const parts = req.parts({ limits: { parts: 1000, ...limits } });
  for await (const part of parts as AsyncIterable<Multipart>) {
    if (part.type === 'file') {
      if (part.fieldname !== field) throw new BadRequestException(`Unexpected file field - ${part.fieldname}`);
      const buffer = await part.toBuffer();
      file = {
        fieldname: part.fieldname,
        originalname: part.filename,
        mimetype: part.mimetype,
        buffer,
        size: buffer.length,
      };
      continue;
    }
    if (part.fieldnameTruncated) throw new BadRequestException(`Field name too long - ${part.fieldname}`);
    if (part.valueTruncated) throw new BadRequestException(`Field value too long - ${part.fieldname}`);
    const value = String(part.value);
    const earlier = fields[part.fieldname];
    fields[part.fieldname] = earlier === undefined ? value : [earlier, value].flat();
  }
  return { fields, file };
}

/** @fastify/multipart's and busboy's errors, as the API has always worded them. */
function refusal(e: unknown): unknown {
  if (e instanceof HttpException) return e;
  const { code, message } = e as { code?: string; message?: string };
  switch (code) {
    case 'FST_REQ_FILE_TOO_LARGE':
      return new PayloadTooLargeException('File too large');
    case 'FST_FILES_LIMIT':
      return new BadRequestException('Too many files');
    case 'FST_FIELDS_LIMIT':
      return new BadRequestException('Too many fields');
    case 'FST_PARTS_LIMIT':
      return new BadRequestException('Too many parts');
    case 'FST_PROTO_VIOLATION':
      return new BadRequestException('Invalid field name');
  }
  if (message === 'Multipart: Boundary not found') return new BadRequestException(message);
  if (message?.includes('unexpected end of multipart data') || message === 'Unexpected end of multipart data') {
    return new BadRequestException('Multipart: Unexpected end of form');
  }
  return e;
}
