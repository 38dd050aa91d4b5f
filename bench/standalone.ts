import globalSetup from '../test/support/global-setup';
import globalTeardown from '../test/support/global-teardown';
import { printTable } from './report';

/**
 * A bench section run on its own (`node dist/bench/<section>.js`): the migrated template the
 * private databases are cloned from, the section, then its table; exit code 1 if it failed.
 */
export async function runStandalone(section: () => Promise<void>): Promise<void> {
  await globalSetup();
  try {
    await section();
    printTable();
  } catch (e) {
    console.error(e);
    process.exitCode = 1;
  } finally {
    await globalTeardown();
  }
}
