import { readFileSync } from 'node:fs';
import path from 'node:path';
import semver from 'semver';
import { MINIMUM_NODE_MAJOR, NO_ROOT_INSTALL, NO_ROOT_PATH, unsupportedNodeMessage } from './node-version';
import { projectRoot } from './project-root';

const read = (file: string) => JSON.parse(readFileSync(path.join(projectRoot(), file), 'utf8'));
const engines: string = read('package.json').engines.node;

describe(unsupportedNodeMessage.name, () => {
  it.each(['20.20.2', '22.15.0', '23.11.1'])('refuses Node %s and says how to get Node 24', (version) => {
    const message = unsupportedNodeMessage(version, '/usr/bin/node');
    expect(message).toContain(`Parley needs Node.js 24 or newer; this is Node.js ${version} (/usr/bin/node).`);
    expect(message).toContain('nvm install 24');
    expect(message).toContain(NO_ROOT_INSTALL);
    expect(message).toContain(NO_ROOT_PATH);
    expect(message).not.toContain('npm i -g');
  });

  it("is what the README's quick start says, which needs no root (npm i -g node@24 fails over apt's node)", () => {
    const readme = readFileSync(path.join(projectRoot(), 'README.md'), 'utf8');
    const quickStart = readme.slice(readme.indexOf('## Quick start'), readme.indexOf('## Web page'));
    expect(quickStart).toContain(`\`${NO_ROOT_INSTALL}\``);
    expect(quickStart).toContain(`\`${NO_ROOT_PATH}\``);
    expect(quickStart).not.toContain('npm i -g');
  });

  it.each(['24.0.0', '24.21.0', '26.1.0'])('accepts Node %s', (version) => {
    expect(unsupportedNodeMessage(version, '/usr/bin/node')).toBeUndefined();
  });

  it('accepts the Node running this test (CI runs on the supported one)', () => {
    expect(unsupportedNodeMessage(process.versions.node, process.execPath)).toBeUndefined();
  });
});

describe('package.json engines', () => {
  it(`allows Node ${MINIMUM_NODE_MAJOR} and newer, and no older one`, () => {
    expect(semver.minVersion(engines)?.version).toBe(`${MINIMUM_NODE_MAJOR}.0.0`);
    expect(semver.satisfies('20.19.0', engines)).toBe(false);
    expect(semver.satisfies('23.99.0', engines)).toBe(false);
  });

  it('asks for no Node that a locked package refuses (no EBADENGINE, none needs a newer Node)', () => {
    const lock: { packages: Record<string, { engines?: { node?: string } }> } = read('package-lock.json');
    const refusing = Object.entries(lock.packages)
      .filter(([name, entry]) => name !== '' && entry.engines?.node)
      .filter(([, entry]) => !semver.subset(engines, entry.engines!.node!))
      .map(([name, entry]) => `${name} wants node ${entry.engines!.node}`);
    expect(refusing).toEqual([]);
  });
});
