import { execFileSync } from 'node:child_process';
import {
  copyFileSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  rmSync,
  utimesSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';

const SCRIPT = path.resolve(__dirname, '../../scripts/build.mjs');

/**
 * scripts/build.mjs (npm run build) in a project of its own, whose steps only count their runs: a
 * second build with nothing changed runs none, an edited or deleted file runs its step again, and
 * dist/ is never removed (a running npm start keeps its files while npm test builds).
 */
describe('scripts/build.mjs', () => {
  let root: string;
  const file = (name: string, text: string) => {
    mkdirSync(path.dirname(path.join(root, name)), { recursive: true });
    writeFileSync(path.join(root, name), text);
  };
  const ran = () =>
    existsSync(path.join(root, 'ran.log')) ? readFileSync(path.join(root, 'ran.log'), 'utf8').trim().split('\n') : [];
  const build = () => {
    rmSync(path.join(root, 'ran.log'), { force: true });
    execFileSync(process.execPath, [path.join(root, 'scripts/build.mjs')], {
      cwd: root,
      stdio: 'ignore',
      env: { ...process.env, PARLEY_COMMIT: 'abc1234' },
    });
    return ran();
  };
  const step = (name: string, out: string) =>
    `node -e "require('fs').mkdirSync('${out}',{recursive:true});require('fs').appendFileSync('ran.log','${name}\\n')"`;

  beforeEach(() => {
    root = mkdtempSync(path.join(tmpdir(), 'parley-build-'));
    file(
      'package.json',
      JSON.stringify({
        name: 'build-test',
        scripts: {
          'build:server': step('server', 'dist/apps'),
          'build:client': step('client', 'libs/api-client/dist'),
        },
      }),
    );
    file('scripts/build-web.mjs', "import { appendFileSync } from 'node:fs';\nappendFileSync('ran.log', 'web\\n');\n");
    copyFileSync(SCRIPT, path.join(root, 'scripts/build.mjs'));
    file('apps/api/src/main.ts', 'export {};\n');
    file('libs/agent/src/turn.ts', 'export {};\n');
    file('libs/api-client/src/index.ts', 'export {};\n');
    file('apps/web/src/main.ts', 'export {};\n');
  });
  afterEach(() => rmSync(root, { recursive: true, force: true }));

  it('builds each part once, then skips what did not change, and records the commit', () => {
    expect(build()).toEqual(['server', 'client', 'web']);
    expect(build()).toEqual([]);
    expect(JSON.parse(readFileSync(path.join(root, 'dist/build-info.json'), 'utf8'))).toEqual({ commit: 'abc1234' });
  });

  it('builds again the parts whose files were edited, added or deleted, and never removes dist/', () => {
    build();
    file('dist/apps/kept.js', 'a running service reads me\n');
    const later = new Date(Date.now() + 5_000);
    utimesSync(path.join(root, 'libs/agent/src/turn.ts'), later, later);
    expect(build()).toEqual(['server']);
    file('libs/agent/src/more.ts', 'export {};\n');
    const now = new Date(Date.now() - 60_000); // an added file as old as git may give it
    utimesSync(path.join(root, 'libs/agent/src/more.ts'), now, now);
    expect(build()).toEqual(['server']);
    rmSync(path.join(root, 'libs/api-client/src/index.ts'));
    expect(build()).toEqual(['server', 'client', 'web']);
    expect(existsSync(path.join(root, 'dist/apps/kept.js'))).toBe(true);
  });
});
