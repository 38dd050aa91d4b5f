import { Client } from 'pg';

/** Drops the template and every per-file database of this run, with the erasure journals beside them. */
export default async function globalTeardown(): Promise<void> {
  const tpl = process.env.PARLEY_TEST_TEMPLATE_URL;
  if (tpl) {
    const admin = new URL(tpl);
    admin.pathname = '/postgres';
    const template = `parley_tpl_${process.env.PARLEY_TEST_RUN}`;
    const c = new Client({ connectionString: admin.toString() });
    await c.connect();
    const { rows } = await c.query<{ datname: string }>(
      `SELECT datname FROM pg_database WHERE datname = ANY ($1::text[]) OR datname LIKE $2`,
      [[template, `${template}_erasure_journal`], `parley_t${process.env.PARLEY_TEST_RUN}_%`],
    );
    for (const { datname } of rows)
      await c.query(`DROP DATABASE IF EXISTS "${datname}" WITH (FORCE)`).catch(() => undefined);
    await c.end();
  }
  const containers = (globalThis as { __parleyContainers?: { stop: () => Promise<void> } }).__parleyContainers;
  await containers?.stop();
}
