// Records every platform binary of packages like @swc/core and msgpackr-extract in
// package-lock.json, marked optional with its os/cpu, so `npm ci` stays in sync on every platform
// even when the registry this lock was made against does not serve other platforms' binaries
// (npm then writes no entry for them and `npm ci` refuses the lock). npm skips these entries
// on platforms they do not match, without fetching them.
// Run after `npm install`: node scripts/lockfile-platforms.mjs
import { readFileSync, writeFileSync } from 'node:fs';

const lock = JSON.parse(readFileSync('package-lock.json', 'utf8'));
const OS = ['darwin', 'linux', 'win32', 'freebsd', 'android'];
const CPU = ['arm64', 'x64', 'ia32', 'arm', 'ppc64', 's390x', 'riscv64'];
const guess = (name) => {
  const parts = name.split('/').pop().split('-');
  return { os: parts.filter((p) => OS.includes(p)), cpu: parts.filter((p) => CPU.includes(p)) };
};
let added = 0;
for (const [path, entry] of Object.entries(lock.packages)) {
  for (const [dep, version] of Object.entries(entry.optionalDependencies ?? {})) {
    const key = `node_modules/${dep}`;
    const nested = `${path}/node_modules/${dep}`;
    if (lock.packages[key] || lock.packages[nested]) continue;
    const { os, cpu } = guess(dep);
    if (!os.length) continue; // not a platform binary: leave it to npm
    lock.packages[key] = { version, optional: true, os, ...(cpu.length ? { cpu } : {}) };
    added++;
  }
}
lock.packages = Object.fromEntries(
  Object.entries(lock.packages).sort(([a], [b]) => (a === '' ? -1 : b === '' ? 1 : a.localeCompare(b))),
);
writeFileSync('package-lock.json', JSON.stringify(lock, null, 2) + '\n');
console.log(`recorded ${added} platform binaries`);
