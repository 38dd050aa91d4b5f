import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { readBuildInfo } from './build-info';

describe(readBuildInfo.name, () => {
  let root: string;
  beforeEach(() => {
    root = mkdtempSync(path.join(tmpdir(), 'parley-build-info-'));
    writeFileSync(path.join(root, 'package.json'), JSON.stringify({ version: '9.8.7' }));
  });
  afterEach(() => rmSync(root, { recursive: true, force: true }));

  it('answers the commit the build recorded', () => {
    mkdirSync(path.join(root, 'dist'));
    writeFileSync(path.join(root, 'dist/build-info.json'), JSON.stringify({ commit: 'a'.repeat(40) }));
    expect(readBuildInfo(root)).toEqual({ version: '9.8.7', commit: 'a'.repeat(40) });
  });

  it('answers a null commit for a build without git (a tarball) or a damaged record', () => {
    expect(readBuildInfo(root)).toEqual({ version: '9.8.7', commit: null });
    mkdirSync(path.join(root, 'dist'));
    writeFileSync(path.join(root, 'dist/build-info.json'), JSON.stringify({ commit: null }));
    expect(readBuildInfo(root)).toEqual({ version: '9.8.7', commit: null });
    writeFileSync(path.join(root, 'dist/build-info.json'), '{not json');
    expect(readBuildInfo(root)).toEqual({ version: '9.8.7', commit: null });
  });
});
