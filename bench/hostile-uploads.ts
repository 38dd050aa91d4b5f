/**
 * Hostile uploads (issue 50): how long the service takes to refuse three PDF bombs (~400 KB
 * each, a Flate stream inflating to 400 MiB) uploaded at once, and what a bystander's GETs cost
 * meanwhile, next to the same bystander on the idle stack in the same run (the machine's own
 * figure). One API and one worker from dist/ (`startStack`), the agent off, as
 * test/e2e/hostile-uploads.e2e-spec.ts runs them. Rounds alternate idle and bombs, so load
 * from elsewhere on the machine falls on both; medians over the rounds, with min–max.
 *
 *   node dist/bench/hostile-uploads.js [rounds=5] [idleSeconds=3]    # or npm run bench:hostile
 */
import globalSetup from '../test/support/global-setup';
import globalTeardown from '../test/support/global-teardown';
import { pdfBomb } from '../test/support/hostile-books';
import { startBystander } from '../test/support/bystander';
import { clientFor, startStack, tokenFor } from '../test/support/stack';
import { fmt, pct, sleep } from './util';

/** How often a bomb's book is read until it is no longer ingesting. */
const POLL_MS = 20;

interface Round {
  idleP50: number;
  idleP99: number;
  /** until the last of the three uploads was answered 202 (stored, queued) */
  acceptAllMs: number;
  refuseAllMs: number;
  bombsP50: number;
  bombsP99: number;
  bystanderMax: number;
  outcomes: string[];
}

async function uploadFile(base: string, user: string, bytes: Buffer, name: string) {
  const form = new FormData();
  form.append('file', new Blob([bytes]), name);
  const res = await fetch(`${base}/v1/books`, {
    method: 'POST',
    headers: { authorization: `Bearer ${tokenFor(user)}` },
    body: form,
  });
  return { status: res.status, body: (await res.json()) as { id?: string; code?: string } };
}

/** The bystander's latencies until `stop()`, none of its requests refused (test/support/bystander.ts). */
function bystander(base: string) {
  const running = startBystander(base);
  return {
    stop: async () => {
      const { latencies, statuses } = await running.stop();
      if (statuses.some((status) => status !== 200)) throw new Error(`bystander GET: ${statuses.join(', ')}`);
      return latencies;
    },
  };
}

/** Three bombs at once from three readers; ms until every one is refused (status failed). */
async function refuseBombs(base: string, bomb: Buffer, round: number) {
  const started = performance.now();
  let accepted = 0;
  const outcomes = await Promise.all(
    ['mallory', 'trudy', 'eve'].map(async (name) => {
      const user = `${name}-${round}`;
      const upload = await uploadFile(base, user, bomb, 'bomb.pdf');
      accepted = Math.max(accepted, performance.now() - started);
      if (upload.status !== 202) return `${upload.status} ${upload.body.code}`;
      const c = clientFor(base, user);
      for (const deadline = Date.now() + 120_000; Date.now() < deadline; await sleep(POLL_MS)) {
        const book = (await c.req('GET', `/v1/books/${upload.body.id}`)).body;
        if (book.status !== 'ingesting') return `${book.status} ${book.error?.code}`;
      }
      return 'still ingesting after 120 s';
    }),
  );
  return { ms: performance.now() - started, acceptedMs: accepted, outcomes };
}

export async function hostileUploadsBench(opts: { rounds: number; idleSeconds: number; setup?: boolean }) {
  if (opts.setup) await globalSetup();
  const bomb = pdfBomb(400); // before the stack starts: seconds of CPU
  const stack = await startStack({ workers: 1, env: { AGENT_ENABLED: 'false' } });
  const rounds: Round[] = [];
  try {
    // warm-up: the first requests of a process compile what later ones reuse
    await refuseBombs(stack.base, bomb, -1);
    for (let r = 0; r < opts.rounds; r++) {
      const idle = bystander(stack.base);
      await sleep(opts.idleSeconds * 1000);
      const idleLatencies = await idle.stop();
      const busy = bystander(stack.base);
      const { ms, acceptedMs, outcomes } = await refuseBombs(stack.base, bomb, r);
      const busyLatencies = await busy.stop();
      const round: Round = {
        idleP50: pct(idleLatencies, 0.5),
        idleP99: pct(idleLatencies, 0.99),
        acceptAllMs: acceptedMs,
        refuseAllMs: ms,
        bombsP50: pct(busyLatencies, 0.5),
        bombsP99: pct(busyLatencies, 0.99),
        bystanderMax: Math.max(...busyLatencies),
        outcomes,
      };
      rounds.push(round);
      console.log(
        `round ${r + 1}: 3 bombs accepted in ${fmt(acceptedMs, 0)} ms, refused in ${fmt(ms, 0)} ms (${outcomes.join(', ')}); bystander p50/p99 ` +
          `${fmt(round.bombsP50)}/${fmt(round.bombsP99)} ms over ${busyLatencies.length} GETs (idle: ` +
          `${fmt(round.idleP50)}/${fmt(round.idleP99)} ms over ${idleLatencies.length})`,
      );
    }
  } finally {
    await stack.stop();
    if (opts.setup) await globalTeardown();
  }
  const summary = (key: keyof Omit<Round, 'outcomes'>) => {
    const xs = rounds.map((r) => r[key]);
    return { median: pct(xs, 0.5), min: Math.min(...xs), max: Math.max(...xs) };
  };
  return {
    rounds: rounds.length,
    acceptAllMs: summary('acceptAllMs'),
    refuseAllMs: summary('refuseAllMs'),
    bystanderDuringBombsP50: summary('bombsP50'),
    bystanderDuringBombsP99: summary('bombsP99'),
    bystanderIdleP50: summary('idleP50'),
    bystanderIdleP99: summary('idleP99'),
    bystanderMax: summary('bystanderMax'),
  };
}

if (require.main === module) {
  const [rounds = '5', idleSeconds = '3'] = process.argv.slice(2);
  hostileUploadsBench({ rounds: Number(rounds), idleSeconds: Number(idleSeconds), setup: true }).then(
    (result) => {
      console.log('\nmedian (min–max) over the rounds, ms:');
      for (const [k, v] of Object.entries(result)) {
        if (typeof v === 'number') continue;
        console.log(`  ${k.padEnd(26)} ${fmt(v.median)} (${fmt(v.min)}–${fmt(v.max)})`);
      }
      console.log(JSON.stringify(result));
      process.exit(0);
    },
    (e: unknown) => {
      console.error(e);
      process.exit(1);
    },
  );
}
