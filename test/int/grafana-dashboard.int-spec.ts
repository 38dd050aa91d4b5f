import { readFileSync } from 'node:fs';
import path from 'node:path';
import type { Queue } from 'bullmq';
import type { Pool } from 'pg';
import { register, Registry } from 'prom-client';
import { ConsumerStats } from '@parley/event-store';
import { MetricsService } from '../../apps/api/src/metrics/metrics.service';
import { WorkerMetrics } from '../../apps/worker/src/metrics/worker-metrics';

const ROOT = path.join(__dirname, '../..');
const NOT_METRICS = new Set(['and', 'or', 'unless', 'bool', 'offset', 'group_left', 'group_right']);
/** series Prometheus makes itself for every target */
const FROM_PROMETHEUS = new Set(['up']);

/** The metric names a PromQL expression reads (a histogram's _bucket, _sum and _count as they are written). */
function metricNames(expr: string): string[] {
  const bare = expr
    .replace(/"(?:[^"\\]|\\.)*"/g, '""')
    .replace(/\{[^}]*\}/g, ' ')
    .replace(/\[[^\]]*\]/g, ' ')
    .replace(/\b(by|without|on|ignoring|group_left|group_right)\s*\([^)]*\)/g, ' ');
  return [...bare.matchAll(/[a-zA-Z_:][a-zA-Z0-9_:]*/g)]
    .filter(
      (m) =>
        !bare
          .slice(m.index + m[0].length)
          .trimStart()
          .startsWith('('),
    ) // a function
    .map((m) => m[0])
    .filter((name) => !NOT_METRICS.has(name));
}

/** What the API and a worker register, as Prometheus sees the series (histograms with their suffixes). */
function registeredSeries(): Set<string> {
  new MetricsService({} as Queue, new ConsumerStats({} as Pool)); // its collectors run at scrape time only
  const metrics = [...register.getMetricsAsArray(), ...new WorkerMetrics(new Registry()).registry.getMetricsAsArray()];
  return new Set(
    metrics.flatMap((m) => {
      const { name, type } = m as unknown as { name: string; type: string };
      return type === 'histogram' ? [`${name}_bucket`, `${name}_sum`, `${name}_count`] : [name];
    }),
  );
}

interface Panel {
  type: string;
  title: string;
  datasource?: { uid: string };
  targets?: Array<{ expr: string; datasource?: { uid: string } }>;
}

describe('deploy/grafana/parley.json and the alert rules', () => {
  const dashboard = JSON.parse(readFileSync(path.join(ROOT, 'deploy/grafana/parley.json'), 'utf8')) as {
    __inputs: Array<{ name: string; pluginId: string }>;
    panels: Panel[];
  };
  const known = registeredSeries();

  it('reads metric names from PromQL', () => {
    expect(
      metricNames(
        'histogram_quantile(0.95, sum by (le, route) (rate(a_bucket{status="5xx"}[$__rate_interval]))) / ignoring (x) group_left b_total > 1 and on () up',
      ),
    ).toEqual(['a_bucket', 'b_total', 'up']);
  });

  it('takes its Prometheus as the DS_PROMETHEUS input, in every panel and query', () => {
    expect(dashboard.__inputs).toEqual([expect.objectContaining({ name: 'DS_PROMETHEUS', pluginId: 'prometheus' })]);
    const graphs = dashboard.panels.filter((p) => p.type !== 'row');
    expect(graphs.length).toBeGreaterThanOrEqual(10);
    for (const p of graphs) {
      expect({ title: p.title, uid: p.datasource?.uid }).toEqual({ title: p.title, uid: '${DS_PROMETHEUS}' });
      for (const t of p.targets ?? []) expect(t.datasource?.uid).toBe('${DS_PROMETHEUS}');
    }
  });

  it('queries only metrics the API or the worker registers, in every panel', () => {
    for (const p of dashboard.panels.filter((p) => p.type !== 'row')) {
      expect(p.targets?.length).toBeGreaterThan(0);
      for (const { expr } of p.targets ?? []) {
        const names = metricNames(expr);
        expect({ title: p.title, expr, names: names.length > 0 }).toEqual({ title: p.title, expr, names: true });
        const unknown = names.filter((n) => !known.has(n));
        expect({ title: p.title, unknown }).toEqual({ title: p.title, unknown: [] });
      }
    }
  });

  it('alerts only on metrics the API or the worker registers (or Prometheus’s up)', () => {
    const rules = readFileSync(path.join(ROOT, 'deploy/prometheus/alerts.yml'), 'utf8');
    const exprs = [...rules.matchAll(/expr: (?:\|\n)?([\s\S]*?)\n\s+for:/g)].map((m) => m[1]);
    expect(exprs.length).toBeGreaterThan(5);
    for (const expr of exprs) {
      const unknown = metricNames(expr).filter((n) => !known.has(n) && !FROM_PROMETHEUS.has(n));
      expect({ expr, unknown }).toEqual({ expr, unknown: [] });
    }
  });
});
