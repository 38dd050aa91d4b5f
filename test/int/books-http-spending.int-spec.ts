import { INestApplication } from '@nestjs/common';
import { randomUUID } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { AddressInfo } from 'node:net';
import path from 'node:path';
import { projectRoot } from '@parley/platform';
import { mintToken } from '../../apps/api/src/auth/auth.guard';
import { startApiApp } from '../support/api-app';
import { createTestDatabase, TestDatabase } from '../support/test-database';

const SECRET = 'books-spending-test-secret-0123456789';
const alice = readFileSync(path.join(projectRoot(), 'data/books/alice.txt'));

describe('books HTTP API with contextual retrieval on (uploads that spend)', () => {
  let db: TestDatabase;
  let app: INestApplication;
  let base: string;

  beforeAll(async () => {
    db = await createTestDatabase();
    // the API only accepts the upload: nothing here calls the model, so the base URL leads nowhere
    app = await startApiApp(db, SECRET, {
      CONTEXTUAL_RETRIEVAL: 'true',
      ANTHROPIC_API_KEY: 'test-key',
      ANTHROPIC_BASE_URL: 'http://127.0.0.1:9',
    });
    base = `http://127.0.0.1:${(app.getHttpServer().address() as AddressInfo).port}/v1`;
  });
  afterAll(async () => {
    await app.close();
    await db.drop();
  });

  const uploadAs = async (user: string, budgetUsd: number) => {
    const token = await mintToken(user, SECRET, 600, { parley_budget_usd_per_month: budgetUsd });
    const res = await fetch(`${base}/books`, {
      method: 'POST',
      headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
      body: JSON.stringify({ title: 'Alice', format: 'text', content: alice.toString('utf8').slice(0, 20_000) }),
    });
    return { status: res.status, body: (await res.json()) as Record<string, unknown> };
  };

  it('refuses an upload over the budget with 402 budget_exceeded and keeps nothing of it', async () => {
    const user = `c-${randomUUID()}`;
    const refused = await uploadAs(user, 0);
    expect(refused.status).toBe(402);
    expect(refused.body).toMatchObject({ code: 'budget_exceeded', budgetUsd: 0 });
    expect((await db.pool.query('SELECT 1 FROM books WHERE owner_id = $1', [user])).rows).toEqual([]);
  });

  it('records the budget in force with an accepted upload, for the calls its ingestion makes', async () => {
    const user = `c-${randomUUID()}`;
    const accepted = await uploadAs(user, 5);
    expect(accepted.status).toBe(202);
    const { rows } = await db.pool.query('SELECT budget_usd_per_month FROM books WHERE id = $1', [accepted.body.id]);
    expect(rows).toEqual([{ budget_usd_per_month: 5 }]);
  });
});
