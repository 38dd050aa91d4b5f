import { Controller, Get, NotFoundException, Param, Req, Res } from '@nestjs/common';
import { ApiExcludeController } from '@nestjs/swagger';
import send from '@fastify/send';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { existsSync } from 'node:fs';
import path from 'node:path';
import { projectRoot } from '@parley/platform';
import { Public } from '../auth/auth.guard';

/** Where `npm run build` (scripts/build-web.mjs) puts the page: index.html and its assets. */
export const WEB_DIR = path.join(projectRoot(__dirname), 'dist', 'web');

/** The page may load only its own script and style and talk only to this API. */
const CSP =
  "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self'; " +
  "base-uri 'none'; form-action 'none'; frame-ancestors 'none'";

const ASSET = /^[a-z0-9][a-z0-9.-]*\.(js|css|svg|map)$/i;

/** The web chat page at `/` and its bundle under `/web/` (outside /v1 and without a token: the page signs in itself). */
@ApiExcludeController()
@Public()
@Controller()
export class WebController {
  @Get()
  async index(@Req() req: FastifyRequest, @Res() reply: FastifyReply): Promise<void> {
    if (!existsSync(path.join(WEB_DIR, 'index.html'))) {
      throw new NotFoundException('the web page is not built: run npm run build');
    }
    const headers = {
      'content-security-policy': CSP,
      'cache-control': 'no-cache',
      'x-content-type-options': 'nosniff',
    };
    await sendFile(req, reply, 'index.html', headers);
  }

  @Get('web/:file')
  async asset(@Param('file') file: string, @Req() req: FastifyRequest, @Res() reply: FastifyReply): Promise<void> {
    if (!ASSET.test(file) || !existsSync(path.join(WEB_DIR, file))) throw new NotFoundException('no such file');
    await sendFile(req, reply, file, { 'cache-control': 'no-cache', 'x-content-type-options': 'nosniff' });
  }
}

/** A file of WEB_DIR with its validators (ETag, Last-Modified), ranges and 304s, and `headers`. */
async function sendFile(req: FastifyRequest, reply: FastifyReply, file: string, headers: Record<string, string>) {
  const sent = await send(req.raw, file, { root: WEB_DIR, cacheControl: false });
  await reply
    .code(sent.statusCode)
    .headers({ ...headers, ...sent.headers })
    .send(sent.stream);
}
