// Preloaded with --require by test/int/old-node-refused.int-spec.ts: this Node says it is 20.20.2,
// so an entry point's version check sees an old Node without one installed.
Object.defineProperty(process.versions, 'node', { value: '20.20.2' });
