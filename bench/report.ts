/** One table for every figure of a run (figure | value | anchor from the same run | ratio | goal) and its JSON. */
import { mkdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { projectRoot } from '../libs/platform/src/project-root';

export interface Row {
  section: string;
  figure: string;
  /** the measured value, as printed */
  value: string;
  /** the raw number behind `value`, for the JSON */
  n?: number;
  anchor?: string;
  ratio?: number;
  goal?: string;
  /** whether the goal is met, when there is one */
  ok?: boolean;
}

export const rows: Row[] = [];
/** Numbers that later sections compare against (e.g. raw INSERT tps), keyed by name. */
export const anchors: Record<string, number> = {};
export const errors: Array<{ section: string; error: string }> = [];

export function add(row: Row): void {
  rows.push(row);
  console.log(
    `  ${row.figure}: ${row.value}${row.anchor ? ` | anchor ${row.anchor}` : ''}${row.ratio !== undefined ? ` | ratio ${fmtRatio(row.ratio)}` : ''}`,
  );
}

export const fmtRatio = (r: number) => (r >= 10 ? r.toFixed(0) : r >= 1 ? r.toFixed(2) : r.toFixed(3));

export function printTable(): void {
  const cells = rows.map((r) => [
    r.section,
    r.figure,
    r.value,
    r.anchor ?? '',
    r.ratio === undefined ? '' : fmtRatio(r.ratio),
    r.goal ? `${r.goal}${r.ok === undefined ? '' : r.ok ? ' ✓' : ' ✗'}` : '',
  ]);
  const head = ['section', 'figure', 'value', 'anchor (same run)', 'ratio', 'goal'];
  const widths = head.map((h, i) => Math.max(h.length, ...cells.map((c) => c[i].length)));
  const line = (c: string[]) => `| ${c.map((x, i) => x.padEnd(widths[i])).join(' | ')} |`;
  console.log('');
  console.log(line(head));
  console.log(`|${widths.map((w) => '-'.repeat(w + 2)).join('|')}|`);
  for (const c of cells) console.log(line(c));
  for (const e of errors) console.log(`section ${e.section} FAILED: ${e.error}`);
}

export function writeJson(meta: Record<string, unknown>, name = new Date().toISOString()): string {
  const dir = path.join(projectRoot(__dirname), 'bench/results');
  mkdirSync(dir, { recursive: true });
  const file = path.join(dir, `${name.replace(/:/g, '-')}.json`);
  writeFileSync(file, JSON.stringify({ ...meta, anchors, rows, errors }, null, 2));
  return file;
}
