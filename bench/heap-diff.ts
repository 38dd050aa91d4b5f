/**
 * `node dist/bench/heap-diff.js <earlier.heapsnapshot> <later.heapsnapshot> [--top 25]`: what a
 * process holds more of between two heap snapshots (the soak's `--heap-snapshots`), by kind of
 * object. A snapshot holds only what is reachable (V8 collects first), so what grows here is kept
 * on purpose by something, not garbage waiting for a collection. Prints the total of each, then
 * the kinds whose count or bytes grew most.
 */
import { readFileSync } from 'node:fs';
import { argValue, fmt } from './util';

interface HeapSnapshot {
  snapshot: { meta: { node_fields: string[]; node_types: [string[], ...unknown[]] } };
  nodes: number[];
  strings: string[];
}

export interface KindTotals {
  count: number;
  bytes: number;
}

/** Objects of a snapshot by kind: the constructor's name for objects, else V8's node type. */
export function kindsOf(file: string): Map<string, KindTotals> {
  const snap = JSON.parse(readFileSync(file, 'utf8')) as HeapSnapshot;
  const fields = snap.snapshot.meta.node_fields;
  const types = snap.snapshot.meta.node_types[0];
  const [typeAt, nameAt, sizeAt] = ['type', 'name', 'self_size'].map((f) => fields.indexOf(f));
  const kinds = new Map<string, KindTotals>();
  for (let i = 0; i < snap.nodes.length; i += fields.length) {
    const type = types[snap.nodes[i + typeAt]];
    const kind = type === 'object' || type === 'closure' ? `${type} ${snap.strings[snap.nodes[i + nameAt]]}` : type;
    const totals = kinds.get(kind) ?? { count: 0, bytes: 0 };
    totals.count++;
    totals.bytes += snap.nodes[i + sizeAt];
    kinds.set(kind, totals);
  }
  return kinds;
}

function total(kinds: Map<string, KindTotals>): KindTotals {
  let count = 0;
  let bytes = 0;
  for (const k of kinds.values()) {
    count += k.count;
    bytes += k.bytes;
  }
  return { count, bytes };
}

if (require.main === module) {
  const [earlierFile, laterFile] = process.argv.slice(2).filter((a) => a.endsWith('.heapsnapshot'));
  if (!earlierFile || !laterFile) {
    console.error('usage: node dist/bench/heap-diff.js <earlier.heapsnapshot> <later.heapsnapshot> [--top 25]');
    process.exit(2);
  }
  const top = Number(argValue('--top') ?? 25);
  const earlier = kindsOf(earlierFile);
  const later = kindsOf(laterFile);
  const mb = (n: number) => `${fmt(n / 2 ** 20, 1)} MB`;
  const [a, b] = [total(earlier), total(later)];
  console.log(`live objects: ${a.count} → ${b.count}; ${mb(a.bytes)} → ${mb(b.bytes)}`);
  const rows = [...new Set([...earlier.keys(), ...later.keys()])].map((kind) => {
    const x = earlier.get(kind) ?? { count: 0, bytes: 0 };
    const y = later.get(kind) ?? { count: 0, bytes: 0 };
    return { kind, count: y.count - x.count, bytes: y.bytes - x.bytes, was: x, is: y };
  });
  rows.sort((p, q) => q.bytes - p.bytes);
  console.log(`\nkinds whose bytes grew most (of ${rows.length}):`);
  for (const r of rows.slice(0, top)) {
    console.log(
      `  ${r.kind.slice(0, 60).padEnd(60)} ${String(r.was.count).padStart(8)} → ${String(r.is.count).padEnd(8)} ${mb(r.was.bytes).padStart(9)} → ${mb(r.is.bytes)}`,
    );
  }
}
