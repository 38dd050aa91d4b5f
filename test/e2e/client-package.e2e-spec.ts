/**
 * The client as an app developer gets it: `npm pack` of libs/api-client, the tarball installed
 * with TypeScript into an empty project outside the repository, a small program
 * (client-package/main.ts) type-checked and run against a live stack: it completes a turn while
 * following the stream, and resumes a stream from a Last-Event-ID.
 */
import { execFile } from 'node:child_process';
import { copyFileSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { projectRoot } from '../../libs/platform/src/project-root';
import { useReaderStack } from '../support/use-stack';

const run = promisify(execFile);
const ROOT = projectRoot(__dirname);
const CLIENT_DIR = path.join(ROOT, 'libs/api-client');
const versionOf = (pkg: string) =>
  JSON.parse(readFileSync(path.join(ROOT, 'node_modules', pkg, 'package.json'), 'utf8')).version as string;
const ANSWER = 'Marisol carried the brass telescope to the island, as the logbook says. [1]';

/** npm without the npm_* variables of an `npm test` around Jest, which would point it at this repository. */
const npmEnv = () =>
  Object.fromEntries(
    Object.entries(process.env).filter(([k]) => !k.toLowerCase().startsWith('npm_')),
  ) as NodeJS.ProcessEnv;

describe('the installable client, packed and installed outside the repository', () => {
  const s = useReaderStack({
    fake: {
      defaultResponder: () => ({ content: [{ type: 'text', text: ANSWER }], delayMsPerChunk: 30 }),
    },
  });
  let project: string;

  beforeAll(async () => {
    project = mkdtempSync(path.join(tmpdir(), 'parley-client-consumer-'));
    const packed = await run('npm', ['pack', '--json', '--pack-destination', project], {
      cwd: CLIENT_DIR,
      env: npmEnv(),
    });
    const [{ filename, files }] = JSON.parse(packed.stdout) as [{ filename: string; files: { path: string }[] }];
    // the tarball holds the built JavaScript, its types and the README, and no source or test
    const paths = files.map((f) => f.path);
    expect(paths).toEqual(expect.arrayContaining(['package.json', 'README.md', 'dist/index.js', 'dist/index.d.ts']));
    expect(paths.filter((p) => p.endsWith('.ts') && !p.endsWith('.d.ts'))).toEqual([]);

    writeFileSync(
      path.join(project, 'package.json'),
      JSON.stringify({ name: 'parley-client-consumer', private: true, type: 'module' }, null, 2),
    );
    writeFileSync(
      path.join(project, 'tsconfig.json'),
      JSON.stringify({
        compilerOptions: {
          module: 'nodenext',
          moduleResolution: 'nodenext',
          target: 'ES2022',
          lib: ['ES2023'],
          types: ['node'],
          strict: true,
          outDir: 'out',
        },
        files: ['main.ts'],
      }),
    );
    copyFileSync(path.join(__dirname, 'client-package/main.ts'), path.join(project, 'main.ts'));
    copyFileSync(path.join(__dirname, 'client-package/wrong.ts'), path.join(project, 'wrong.ts'));
    await run(
      'npm',
      [
        'install',
        '--no-audit',
        '--no-fund',
        '--prefer-offline',
        `./${filename}`,
        `typescript@${versionOf('typescript')}`,
        `@types/node@${versionOf('@types/node')}`,
      ],
      { cwd: project, env: npmEnv() },
    );
    // the program type-checks against the installed types alone, and compiles to out/main.js
    await run(path.join(project, 'node_modules/.bin/tsc'), ['-p', 'tsconfig.json'], { cwd: project });
  }, 180_000);

  afterAll(() => rmSync(project, { recursive: true, force: true }));

  it('has types that refuse a program misusing the API', async () => {
    const refused = await run(
      path.join(project, 'node_modules/.bin/tsc'),
      ['--noEmit', '--module', 'nodenext', '--target', 'ES2022', '--types', 'node', '--strict', 'wrong.ts'],
      { cwd: project },
    ).then(
      () => '',
      (e: { stdout: string }) => e.stdout,
    );
    expect(refused).toContain(`wrong.ts(5,`); // the path that does not exist
    expect(refused).toContain(`wrong.ts(6,`); // the body without its content
  }, 60_000);

  it('completes a turn over the stream and resumes a stream from a Last-Event-ID, against a live stack', async () => {
    const out = await run('node', [path.join(project, 'out/main.js'), s.stack.base, s.alice.token, s.bookId], {
      cwd: project,
      timeout: 60_000,
    });
    const result = JSON.parse(out.stdout.trim());
    expect(result.reply).toBe(ANSWER);
    expect(result.citations).toBeGreaterThanOrEqual(0);
    // the text came as it was written, before AssistantReplied held all of it
    expect(result.streamedText.length).toBeGreaterThan(0);
    expect(ANSWER.startsWith(result.streamedText)).toBe(true);
    expect(result.seen[0]).toBe('1 ConversationStarted');
    expect(result.seen.at(-1)).toBe(`${result.lastEventId} AssistantReplied`);
    // the resumed stream: exactly the events after version 1, once each, in order
    expect(result.resumed).toEqual(result.seen.slice(1));
    expect(result.missing).toEqual([404, 'conversation_not_found']);
    expect(result.streamRefusal).toBe('404 conversation_not_found');
  }, 90_000);

  it('is also loaded by require() from a CommonJS program', async () => {
    const out = await run(
      'node',
      [
        '-e',
        "const c = require('@parley/client'); console.log(typeof c.createParleyClient, c.CONVERSATION_EVENT_TYPES.length)",
      ],
      { cwd: project },
    );
    expect(out.stdout.trim()).toMatch(/^function \d+$/);
  });
});
