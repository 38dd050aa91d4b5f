import { ContractHarness } from '../support/contract-harness';
import { describeBeforeTheWorker } from './contract/before-worker';
import { describeClientMistakes } from './contract/client-mistakes';
import { describeBookLifecycleEnd, describeHappyPath } from './contract/happy-path';
import { describeVerdict } from './contract/verdict';

/**
 * The API against its own OpenAPI document, judged by an independent validator: every request
 * goes through Stoplight Prism's validating proxy, which checks the request and the answer
 * against the document the API serves. Every operation is called, well-formed and with the
 * mistakes clients make; the test fails on any violation, any 5xx, any error that is not an RFC
 * 9457 problem (application/problem+json with a `code` and the `status`), and any operation of
 * the document that nothing here calls (a new endpoint needs its contract calls). It also fails
 * when the served document differs from the checked-in docs/openapi.json (run `npm run openapi`).
 * Header formats (If-Match, Idempotency-Key, Last-Event-ID) and cursors count as mistakes no
 * schema shows; a body that Prism cannot parse (malformed JSON: its proxy never answers) and the
 * conversation stream (it never ends) go straight to the API, and Prism's validator checks their
 * answers.
 *
 *   npm run build && npx jest test/e2e/contract.e2e-spec.ts
 *
 * Each verdict prints a table of departures, one line per operation, status and finding, with
 * the calls that showed it. CONTRACT_REPORT=<file> also writes every call (method, path, status,
 * body, Prism's violations) as JSON.
 */

describe('API contract: every operation through Prism against the served OpenAPI document (e2e)', () => {
  // one stack for every scenario: the verdict needs all the calls, and CI time matters
  const h = new ContractHarness();

  beforeAll(() => h.start(), 60_000);
  afterAll(() => h.stop());

  describeBeforeTheWorker(h);
  describeHappyPath(h);
  describeClientMistakes(h);
  describeBookLifecycleEnd(h);
  describeVerdict(h);
});
