import { Controller, Get, NotFoundException, Param, Res } from '@nestjs/common';
import { ApiExcludeController } from '@nestjs/swagger';
import { Response } from 'express';
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
  index(@Res() res: Response): void {
    const file = path.join(WEB_DIR, 'index.html');
    if (!existsSync(file)) throw new NotFoundException('the web page is not built: run npm run build');
    res.set({ 'content-security-policy': CSP, 'cache-control': 'no-cache', 'x-content-type-options': 'nosniff' });
    res.sendFile(file);
  }

  @Get('web/:file')
  asset(@Param('file') file: string, @Res() res: Response): void {
    if (!ASSET.test(file) || !existsSync(path.join(WEB_DIR, file))) throw new NotFoundException('no such file');
    res.set({ 'cache-control': 'no-cache', 'x-content-type-options': 'nosniff' });
    res.sendFile(file, { root: WEB_DIR });
  }
}
