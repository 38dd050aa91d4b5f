// Builds the web chat page into dist/web: type-checks apps/web (its own tsconfig, with the DOM
// library), bundles apps/web/src/main.ts with esbuild and copies index.html and the stylesheet.
import { execFileSync } from 'node:child_process';
import { copyFileSync, mkdirSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { build } from 'esbuild';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const src = path.join(root, 'apps/web');
const out = path.join(root, 'dist/web');

execFileSync(
  process.execPath,
  [path.join(root, 'node_modules/typescript/bin/tsc'), '-p', path.join(src, 'tsconfig.json')],
  {
    stdio: 'inherit',
  },
);
mkdirSync(out, { recursive: true });
await build({
  entryPoints: [path.join(src, 'src/main.ts')],
  outfile: path.join(out, 'app.js'),
  bundle: true,
  format: 'iife',
  target: ['es2020'],
  minify: true,
  sourcemap: true,
  tsconfig: path.join(src, 'tsconfig.json'),
  logLevel: 'warning',
});
copyFileSync(path.join(src, 'index.html'), path.join(out, 'index.html'));
copyFileSync(path.join(src, 'app.css'), path.join(out, 'app.css'));
