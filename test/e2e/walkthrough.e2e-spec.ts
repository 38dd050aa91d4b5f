import { spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { projectRoot } from '@parley/platform';
import { clientFor, startStack, Stack, TEST_JWT_SECRET } from '../support/stack';

const ROOT = projectRoot();

/** The first ```sh block after `heading` in `text`, exactly as a reader copies it. */
function shBlockAfter(text: string, heading: string, file: string): string {
  const section = text.indexOf(heading);
  if (section < 0) throw new Error(`${file} has no "${heading}" section`);
  const open = text.indexOf('```sh\n', section);
  const close = text.indexOf('\n```', open + 1);
  if (open < 0 || close < 0) throw new Error(`the "${heading}" section of ${file} has no \`\`\`sh block`);
  return text.slice(open + '```sh\n'.length, close + 1);
}

/** The shell block of the curl walkthrough (docs/walkthrough.md), exactly as a reader copies it. */
export function walkthroughScript(page = readFileSync(path.join(ROOT, 'docs', 'walkthrough.md'), 'utf8')): string {
  return shBlockAfter(page, '# Walkthrough with curl', 'docs/walkthrough.md');
}

/** The README's first curl steps: a shortened copy of the walkthrough's opening lines. */
export function readmeFirstSteps(readme = readFileSync(path.join(ROOT, 'README.md'), 'utf8')): string {
  return shBlockAfter(readme, '## First steps with curl', 'README.md');
}

/** The README's catalogue lines: a publisher's book, found and talked with by a reader of its tenant. */
export function readmeCatalogue(readme = readFileSync(path.join(ROOT, 'README.md'), 'utf8')): string {
  return shBlockAfter(readme, '### A catalogue for every reader', 'README.md');
}

/** Shell commands as lines, continuations joined, comments and blank lines left out. */
const commandsOf = (script: string): string[] =>
  script
    .replace(/\\\n\s*/g, '')
    .split('\n')
    .map((line) => line.trim())
    .filter((line) => line && !line.startsWith('#'));

function runBash(script: string, env: NodeJS.ProcessEnv): Promise<{ code: number | null; out: string; err: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn('bash', ['-c', script], { cwd: ROOT, env, stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    let err = '';
    child.stdout.on('data', (d: Buffer) => (out += d.toString()));
    child.stderr.on('data', (d: Buffer) => (err += d.toString()));
    child.on('error', reject);
    child.on('close', (code) => resolve({ code, out, err }));
  });
}

/** The curl walkthrough, run as written against a started API and worker, so it cannot rot. */
describe('curl walkthrough (e2e)', () => {
  let stack: Stack;

  beforeAll(async () => {
    stack = await startStack({ apis: 1, workers: 1 });
  }, 60_000);
  afterAll(() => stack?.stop());

  it("has the README's first curl steps, word for word, among its commands", () => {
    const walkthrough = commandsOf(walkthroughScript());
    const firstSteps = commandsOf(readmeFirstSteps());
    expect(firstSteps.length).toBeGreaterThan(5);
    for (const command of firstSteps) expect(walkthrough).toContain(command);
  });

  it('runs from the root of a clone with curl and jq, and shows the agent answering from the book', async () => {
    for (const tool of ['curl', 'jq']) {
      const found = await runBash(`command -v ${tool}`, process.env);
      if (found.code !== 0) throw new Error(`the curl walkthrough needs ${tool}: install it (apt-get install ${tool})`);
    }
    const script = walkthroughScript();
    expect(script).toContain('data/books/alice.txt');

    const env: NodeJS.ProcessEnv = { ...process.env, PARLEY_URL: stack.base, AUTH_JWT_SECRET: TEST_JWT_SECRET };
    delete env.TOKEN; // the walkthrough mints its own with the CLI
    // as a reader would paste it, but stopping at the first failing command
    const { code, out, err } = await runBash(`set -euo pipefail\n${script}`, env);
    if (code !== 0) throw new Error(`the walkthrough exited ${code}\n--- stdout\n${out}\n--- stderr\n${err}`);

    expect(out).toMatch(/\{"title":"Alice in Wonderland","status":"ready","chunkCount":\d+,"chapters":12\}/);
    expect(out).toMatch(/"turnId":"[0-9a-f-]{36}"/);
    expect(out).toContain('[1,"ConversationStarted"]');
    expect(out).toContain('[2,"UserMessagePosted"]');
    expect(out).toContain('"ToolInvoked"]');
    expect(out).toContain('"AssistantReplied"]');
    // the SSE replay after Last-Event-ID: 2 starts at version 3
    expect(out).toMatch(/^retry: \d+$/m);
    expect(out).toMatch(/^id: 3\nevent: \w+\ndata: \{/m);
    expect(out).not.toMatch(/^id: [12]$/m);
    expect(out).toContain('{"role":"user","content":"Who did Alice meet sitting on a mushroom?"}');

    // the offline model answers the README's question right: the Caterpillar, from the passage that says so
    const alice = clientFor(stack.base, 'alice');
    const [latest] = (await alice.req('GET', '/v1/conversations?limit=1')).body.items as Array<{ id: string }>;
    const { items } = (await alice.req('GET', `/v1/conversations/${latest.id}/messages`)).body as {
      items: Array<{ role: string; content: string }>;
    };
    expect(items.find((m) => m.role === 'assistant')?.content).toMatch(/caterpillar, that was sitting on the top/i);
  }, 120_000);

  it("runs the README's catalogue lines: the reader finds the publisher's book and talks with it once it is ready", async () => {
    const env: NodeJS.ProcessEnv = { ...process.env, PARLEY_URL: stack.base, AUTH_JWT_SECRET: TEST_JWT_SECRET };
    const { code, out, err } = await runBash(`set -euo pipefail\n${readmeCatalogue()}`, env);
    if (code !== 0) throw new Error(`the catalogue lines exited ${code}\n--- stdout\n${out}\n--- stderr\n${err}`);
    expect(out).toContain("Alice (the school's copy)");
    expect(out.trim().split('\n').pop()).toMatch(/^[0-9a-f-]{36}$/);
  }, 120_000);
});
