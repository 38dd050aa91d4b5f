import { readFileSync } from 'node:fs';
import path from 'node:path';
import { ContractHarness, Departure } from '../../support/contract-harness';
import { Violation } from '../../support/prism';

const ROOT = path.resolve(__dirname, '../../..');

/** Every call of the scenarios before it, judged against the document (registered last). */
export function describeVerdict(h: ContractHarness): void {
  describe('the verdict', () => {
    beforeAll(async () => {
      const checked = await h.prism.validateResponses(h.directExchanges);
      h.directExchanges.forEach((x, i) => x.call.violations.push(...checked[i]));
    }, 30_000);

    /** One line per operation, status and departure, with the calls that showed it. */
    const table = (rows: Departure[]) => {
      const groups = new Map<string, { op: string; status: number; what: string; labels: string[] }>();
      for (const { call, what } of rows) {
        const op = call.operation ?? `${call.method} ${call.url} (no operation)`;
        const key = `${op} ${call.status} ${what}`;
        const group = groups.get(key) ?? { op, status: call.status, what, labels: [] };
        if (!group.labels.includes(call.label)) group.labels.push(call.label);
        groups.set(key, group);
      }
      return [...groups.values()]
        .sort((a, b) => a.op.localeCompare(b.op) || a.status - b.status)
        .map(
          (g) =>
            `  ${g.op.padEnd(50)} ${String(g.status).padEnd(4)} ${g.what}\n` +
            `  ${''.padEnd(50)}      seen in: ${g.labels.slice(0, 3).join('; ')}${g.labels.length > 3 ? `; and ${g.labels.length - 3} more` : ''}`,
        )
        .join('\n');
    };
    const fail = (title: string, rows: Departure[]) => {
      if (rows.length === 0) return;
      throw new Error(`${title} (${rows.length} in ${h.calls.length} calls):\n${table(rows)}`);
    };

    const refuses = (v: Violation, where: string) =>
      where === 'security'
        ? v.location[0] === 'request' && String(v.code) === '401'
        : v.location.join('.').toLowerCase().startsWith(where.toLowerCase());

    it('the served document is the checked-in docs/openapi.json', () => {
      const checkedIn = JSON.parse(readFileSync(path.join(ROOT, 'docs/openapi.json'), 'utf8'));
      expect(h.doc).toEqual(checkedIn);
    });

    it('every operation of the document was called', () => {
      const called = new Set(h.calls.map((c) => c.operation).filter(Boolean));
      expect(h.operations.map((o) => o.key).filter((k) => !called.has(k))).toEqual([]);
      expect(h.calls.filter((c) => !c.operation).map((c) => `${c.method} ${c.url}`)).toEqual([]);
    });

    it('Prism finds no departure of any answer from the document', () => {
      fail(
        'answers that depart from the document',
        h.calls.flatMap((c) =>
          c.violations
            .filter((v) => v.location[0] !== 'request')
            .map((v) => ({ call: c, what: `${v.location.join('.')}: ${v.message}` })),
        ),
      );
    });

    it('the document accepts every well-formed request', () => {
      fail(
        'well-formed requests the document refuses',
        h.calls
          .filter((c) => c.kind === 'valid')
          .flatMap((c) =>
            c.violations
              .filter((v) => v.location[0] === 'request')
              .map((v) => ({ call: c, what: `${v.location.join('.')}: ${v.message}` })),
          ),
      );
    });

    it('the document refuses the mistakes a schema can describe, as the API does', () => {
      fail(
        'mistakes the API refuses but the document accepts',
        h.calls
          .filter((c) => c.kind === 'schema' && c.via === 'prism')
          .filter((c) => !c.violations.some((v) => refuses(v, c.where ?? 'request')))
          .map((c) => ({ call: c, what: `no violation at ${c.where ?? 'request'} from Prism` })),
      );
    });

    it('answers no 5xx, and each call the status it should', () => {
      fail(
        'unexpected statuses',
        h.calls
          .filter((c) => c.status >= 500 || !c.expect.includes(c.status))
          .map((c) => ({
            call: c,
            what: `expected ${c.expect.join(' or ')}: ${c.text.slice(0, 120)}`,
          })),
      );
    });

    it('describes a body for every answer that has one', () => {
      const undescribed = h.calls.flatMap((c) => {
        const o = h.operations.find((x) => x.key === c.operation);
        const responses = o?.op.responses ?? {};
        const response = responses[String(c.status)] ?? responses[`${String(c.status)[0]}XX`] ?? responses.default;
        if (!response || response.content || c.text.length === 0) return [];
        return [{ call: c, what: `a ${c.contentType.split(';')[0]} body, but the document describes none` }];
      });
      fail('answers whose body the document does not describe', undescribed);
    });

    it('answers every error as an RFC 9457 problem with a code', () => {
      const problems = h.calls
        .filter((c) => c.status >= 400)
        .flatMap((c) => {
          const wrong: string[] = [];
          if (!/^application\/problem\+json\b/.test(c.contentType))
            wrong.push(`content-type ${c.contentType || 'none'}`);
          if (typeof c.body?.code !== 'string') wrong.push('no string code');
          if (c.body?.status !== c.status) wrong.push(`status ${JSON.stringify(c.body?.status)}`);
          return wrong.length ? [{ call: c, what: wrong.join('; ') }] : [];
        });
      fail('errors that are not problem details', problems);
    });

    afterAll(() => {
      if (process.env.CONTRACT_REPORT) {
        // eslint-disable-next-line @typescript-eslint/no-require-imports
        require('node:fs').writeFileSync(process.env.CONTRACT_REPORT, JSON.stringify(h.calls, null, 2));
      }
    });
  });
}
