/** The oldest Node.js major Parley runs on: package.json's `engines` says `>=` this (a unit test holds them together). */
export const MINIMUM_NODE_MAJOR = 24;

/** What to tell someone who started Parley on `version` (e.g. "20.20.2"), or undefined when it is new enough. */
export function unsupportedNodeMessage(version: string, executable: string): string | undefined {
  const major = Number.parseInt(version, 10);
  if (major >= MINIMUM_NODE_MAJOR) return undefined;
  return [
    `Parley needs Node.js ${MINIMUM_NODE_MAJOR} or newer; this is Node.js ${version} (${executable}).`,
    `Install Node.js ${MINIMUM_NODE_MAJOR} with \`nvm install ${MINIMUM_NODE_MAJOR}\` or \`npm i -g node@${MINIMUM_NODE_MAJOR}\`, check \`node -v\`, then run this again.`,
  ].join('\n');
}
