import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import path from 'node:path';

/** Bull Board's page template, as installed (@bull-board/ui renders it for the board's entry routes). */
export const BOARD_TEMPLATE = path.join(
  path.dirname(require.resolve('@bull-board/ui/package.json')),
  'dist',
  'index.ejs',
);

/**
 * Inline styles the bundle's scripts render: the Redis logo's `<style>` (@bull-board/ui 9.10.1,
 * pinned in package.json). An upgrade that changes it shows as a refused style in the Chromium e2e test.
 */
const BUNDLE_STYLE_HASHES = ["'sha256-r2N1TB/gHbBtBZFKg7ejmq1acVSREzucTAEw6ga4hoU='"];

/**
 * The board's CSP: its own scripts, styles, images and worker, and fetches to its own API; inline
 * styles only by hash (the template's loading placeholder, the bundle's logo), and no inline script.
 * Its Google Fonts stylesheet is refused: the board falls back to system fonts rather than have an
 * operator's browser call a third party. `base-uri 'self'`: the page sets `<base href>` to the board's path.
 */
export function boardCsp(template: string = readFileSync(BOARD_TEMPLATE, 'utf8')): string {
  const hashes = [
    ...inlineStyles(template).map((css) => `'sha256-${createHash('sha256').update(css).digest('base64')}'`),
    ...BUNDLE_STYLE_HASHES,
  ];
  return [
    "default-src 'none'",
    "script-src 'self'",
    `style-src 'self' 'unsafe-hashes' ${[...new Set(hashes)].join(' ')}`,
    "img-src 'self' data:",
    "connect-src 'self'",
    "worker-src 'self'",
    "base-uri 'self'",
    "form-action 'self'",
    "frame-ancestors 'none'",
  ].join('; ');
}

/** The contents of the template's `<style>` elements and `style="…"` attributes, as the browser hashes them. */
export function inlineStyles(template: string): string[] {
  const elements = [...template.matchAll(/<style[^>]*>([\s\S]*?)<\/style>/g)].map((m) => m[1]);
  const attributes = [...template.matchAll(/\sstyle="([^"]*)"/g)].map((m) => m[1]);
  return [...elements, ...attributes];
}
