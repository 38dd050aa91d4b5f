/**
 * From V8's precise coverage (the inspector's `Profiler.takePreciseCoverage`) to the project's
 * source files that ran: a compiled file under dist/apps or dist/libs is its .ts source, a file
 * ran when one of its functions was called since the counts were last taken.
 */
import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

export interface ScriptCoverage {
  url: string;
  functions: Array<{ functionName: string; ranges: Array<{ startOffset: number; endOffset: number; count: number }> }>;
}

/**
 * `apps/…/x.ts` or `libs/…/x.ts` for a script of the project's dist/, else undefined (node_modules,
 * node: internals, dist/test and dist/bench). Modules (`*.module.ts`) only wire the others: left out.
 */
export function sourceOf(url: string, root: string): string | undefined {
  if (!url.startsWith('file://')) return undefined;
  const rel = path.relative(path.join(root, 'dist'), fileURLToPath(url)).split(path.sep).join('/');
  if (!/^(apps|libs)\//.test(rel) || rel.includes('/node_modules/') || !rel.endsWith('.js')) return undefined;
  const ts = rel.replace(/\.js$/, '.ts');
  return ts.endsWith('.module.ts') ? undefined : ts;
}

/** The source files with at least one function called (function granularity: `ranges[0]` is the whole function). */
export function sourceFilesRun(scripts: ScriptCoverage[], root: string): Set<string> {
  const files = new Set<string>();
  for (const s of scripts) {
    const ts = sourceOf(s.url, root);
    if (ts && s.functions.some((f) => (f.ranges[0]?.count ?? 0) > 0)) files.add(ts);
  }
  return files;
}

/**
 * Whether a source file only re-exports others (a barrel `index.ts`): compiled to CommonJS, its
 * re-exports are getters that run at every use, but they are wiring, like the modules.
 */
export function onlyReExports(root: string, file: string): boolean {
  const full = path.join(root, file);
  if (!existsSync(full)) return false;
  const code = readFileSync(full, 'utf8')
    .replace(/\/\*[\s\S]*?\*\//g, '')
    .replace(/^\s*\/\/.*$/gm, '');
  const reExport = /export\s+(?:type\s+)?(?:\*(?:\s+as\s+\w+)?|\{[^}]*\})\s+from\s+['"][^'"]+['"]\s*;?/g;
  return code.replace(reExport, '').trim() === '';
}

/** `wc -l` of a source file under the root; NaN when it is gone (a stale compiled file in dist/). */
export function linesOf(root: string, file: string): number {
  const full = path.join(root, file);
  if (!existsSync(full)) return NaN;
  return readFileSync(full, 'utf8').split('\n').length - 1;
}
