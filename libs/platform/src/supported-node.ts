/**
 * Imported first by every entry point (API, worker, CLI, migrate): on a Node.js older than
 * package.json's `engines` allows, the process stops at once with what to do, before a dependency
 * fails later with an error that names neither Node nor its version.
 */
import { unsupportedNodeMessage } from './node-version';

const refusal = unsupportedNodeMessage(process.versions.node, process.execPath);
if (refusal) {
  process.stderr.write(`${refusal}\n`);
  process.exit(1);
}
