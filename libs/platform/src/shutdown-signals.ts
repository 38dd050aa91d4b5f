/**
 * The signals that stop a Parley process gracefully. Nest's default list also has SIGUSR2 (and
 * SIGHUP, …): SIGUSR2 is the usual `--heapsnapshot-signal`, and an operator who asks a worker for
 * a heap snapshot must get one, not a shutdown (and a second snapshot as Nest re-raises it).
 */
export const SHUTDOWN_SIGNALS = ['SIGTERM', 'SIGINT'];
