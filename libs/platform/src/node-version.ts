/** The oldest Node.js major Parley runs on: package.json's `engines` says `>=` this (a unit test holds them together). */
export const MINIMUM_NODE_MAJOR = 24;

/**
 * Node 24 without root, as .ci/run gets it: the npm registry's `node` package (the official binary)
 * in a folder of one's own. `npm i -g node@24` needs root and fails over a distribution's node
 * (EEXIST on /usr/bin/node). The README gives the same two commands (a unit test holds them together).
 */
export const NO_ROOT_INSTALL = `npm install --prefix ~/.parley-node node@${MINIMUM_NODE_MAJOR}`;
export const NO_ROOT_PATH = 'export PATH=~/.parley-node/node_modules/.bin:$PATH';

/** What to tell someone who started Parley on `version` (e.g. "20.20.2"), or undefined when it is new enough. */
export function unsupportedNodeMessage(version: string, executable: string): string | undefined {
  const major = Number.parseInt(version, 10);
  if (major >= MINIMUM_NODE_MAJOR) return undefined;
  return [
    `Parley needs Node.js ${MINIMUM_NODE_MAJOR} or newer; this is Node.js ${version} (${executable}).`,
    `Install Node.js ${MINIMUM_NODE_MAJOR} with \`nvm install ${MINIMUM_NODE_MAJOR}\`, or without root: \`${NO_ROOT_INSTALL}\` and \`${NO_ROOT_PATH}\`; check \`node -v\`, then run this again.`,
  ].join('\n');
}
