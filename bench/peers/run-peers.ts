/** Runs the peers against the fake Messages API (a process of its own) and prints a small table. */
import '../trace-round-trips';
import path from 'node:path';
import { projectRoot } from '../../libs/platform/src/project-root';
import { startProcess } from '../../test/support/stack';
import { waitFor } from '../../test/support/wait-for';
import { add } from '../report';
import { dropLeftoverDatabases, PeerResult } from './common';
import { dbosPeer } from './dbos';
import { langGraphPeer } from './langgraph';

const ROOT = projectRoot(__dirname);

async function startFake() {
  const proc = startProcess('fake', [path.join(ROOT, 'dist/bench/fake-server.js')], {});
  let url = '';
  await waitFor(
    'the fake Messages API process',
    () => Boolean((url = /listening (\S+)/.exec(proc.output())?.[1] ?? '')),
    15_000,
  );
  return { proc, url };
}

function print(name: string, r: PeerResult): void {
  console.log(
    `${name}: ${r.cpuMsPerTurn.toFixed(1)} ms CPU/turn, ${r.statementsPerTurn.toFixed(1)} statements/turn (n=${r.turns})`,
  );
  for (const [k, v] of Object.entries(r.statements).sort((a, b) => b[1] - a[1])) console.log(`  ${v.toFixed(2)}  ${k}`);
}

const PEERS = {
  langgraph: { name: 'LangGraph createReactAgent + PostgresSaver', run: langGraphPeer },
  dbos: { name: 'DBOS workflow per turn (steps: model calls, tool)', run: dbosPeer },
};

/** The `peers` section of `npm run bench`: each peer's CPU and statements per search turn, as rows. */
export async function peersBench(): Promise<void> {
  await dropLeftoverDatabases();
  const { proc, url } = await startFake();
  try {
    for (const peer of Object.values(PEERS)) {
      const r = await peer.run(url);
      print(peer.name, r);
      add({
        section: 'peers',
        figure: `${peer.name}: CPU per search turn (turns 11–40 of one thread)`,
        value: `${r.cpuMsPerTurn.toFixed(1)} ms`,
        n: r.cpuMsPerTurn,
      });
      add({
        section: 'peers',
        figure: `${peer.name}: Postgres statements per search turn`,
        value: `${r.statementsPerTurn.toFixed(1)}`,
        n: r.statementsPerTurn,
      });
    }
  } finally {
    await proc.kill();
  }
}

async function main(): Promise<void> {
  const { proc, url } = await startFake();
  try {
    const which = process.argv[2] as keyof typeof PEERS | undefined;
    for (const [key, peer] of Object.entries(PEERS)) if (!which || which === key) print(peer.name, await peer.run(url));
  } finally {
    await proc.kill();
  }
}

if (require.main === module)
  main().then(
    () => process.exit(0),
    (e) => {
      console.error(e);
      process.exit(1);
    },
  );
