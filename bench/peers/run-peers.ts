/** Runs the peers against the fake Messages API (a process of its own) and prints a small table. */
import '../trace-round-trips';
import path from 'node:path';
import { projectRoot } from '../../libs/platform/src/project-root';
import { startProcess } from '../../test/support/stack';
import { waitFor } from '../../test/support/wait-for';
import { PeerResult } from './common';
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

async function main(): Promise<void> {
  const { proc, url } = await startFake();
  try {
    const which = process.argv[2];
    if (!which || which === 'langgraph') print('LangGraph createReactAgent + PostgresSaver', await langGraphPeer(url));
    if (!which || which === 'dbos') print('DBOS workflow per turn (steps: model calls, tool)', await dbosPeer(url));
  } finally {
    await proc.kill();
  }
}

main().then(
  () => process.exit(0),
  (e) => {
    console.error(e);
    process.exit(1);
  },
);
