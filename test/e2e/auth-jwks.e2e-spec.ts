import {
  discoverOAuthProtectedResourceMetadata,
  extractWWWAuthenticateParams,
} from '@modelcontextprotocol/sdk/client/auth.js';
import { FakeIdp, hs256WithPublicKey, IdpKey, startFakeIdp, unsignedToken } from '../support/fake-idp';
import { startStack, Stack, tokenFor } from '../support/stack';

const COOLDOWN_MS = 1_000;
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/**
 * Sign-in from an identity provider: the real API started with AUTH_JWKS_URL, AUTH_ISSUER and
 * AUTH_AUDIENCE (and no AUTH_JWT_SECRET), against a JWKS server this suite runs.
 */
describe('identity provider tokens (e2e)', () => {
  let idp: FakeIdp;
  let stack: Stack;
  let rsa: IdpKey;
  let ec: IdpKey;

  beforeAll(async () => {
    idp = await startFakeIdp();
    rsa = await idp.newKey('RS256');
    ec = await idp.newKey('ES256');
    stack = await startStack({
      workers: 0,
      env: {
        AUTH_JWT_SECRET: '', // unset: the provider is the only way in
        AUTH_JWKS_URL: idp.jwksUrl,
        AUTH_ISSUER: idp.issuer,
        AUTH_AUDIENCE: idp.audience,
        AUTH_JWKS_COOLDOWN_MS: String(COOLDOWN_MS),
      },
    });
  }, 60_000);
  afterAll(async () => {
    await stack?.stop();
    await idp?.close();
  });

  const get = (token: string, path = '/v1/conversations') =>
    fetch(`${stack.base}${path}`, { headers: { authorization: `Bearer ${token}` } });
  const statusOf = async (token: string) => (await get(token)).status;

  it('accepts an RS256 and an ES256 token; `sub` is the user', async () => {
    const alice = await idp.sign(rsa, { sub: 'alice-idp' });
    const created = await fetch(`${stack.base}/v1/conversations`, {
      method: 'POST',
      headers: { authorization: `Bearer ${alice}`, 'content-type': 'application/json' },
      body: JSON.stringify({ title: 'from the provider' }),
    });
    expect(created.status).toBe(201);
    const { id } = (await created.json()) as { id: string };
    expect((await get(alice, `/v1/conversations/${id}`)).status).toBe(200);
    // bob signs in with the EC key and does not see alice's conversation
    const bob = await idp.sign(ec, { sub: 'bob-idp' });
    expect((await get(bob, `/v1/conversations/${id}`)).status).toBe(404);
    expect((await get(await idp.sign(ec, { sub: 'alice-idp' }), `/v1/conversations/${id}`)).status).toBe(200);
    expect(idp.fetches()).toBe(1); // the key set is cached
  });

  it('checks /mcp tokens with the REST routes’ verifier: one key set, one cache', async () => {
    const before = idp.fetches();
    const initialize = await fetch(`${stack.base}/mcp`, {
      method: 'POST',
      headers: {
        authorization: `Bearer ${await idp.sign(rsa, { sub: 'erin-idp' })}`,
        'content-type': 'application/json',
        accept: 'application/json, text/event-stream',
      },
      body: JSON.stringify({
        jsonrpc: '2.0',
        id: 1,
        method: 'initialize',
        params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'jwks', version: '1' } },
      }),
    });
    expect(initialize.status).toBe(200);
    // a verifier of its own would have fetched the key set again for its first token
    expect(idp.fetches()).toBe(before);
  });

  it('tells a client without a token where tokens come from, as MCP clients look it up (RFC 9728)', async () => {
    for (const path of ['/v1/conversations', '/mcp']) {
      const refused = await fetch(`${stack.base}${path}`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: '{}',
      });
      expect([path, refused.status]).toEqual([path, 401]);
      // the MCP SDK's own parsing of the challenge, then its discovery of the document it names
      const { resourceMetadataUrl, error } = extractWWWAuthenticateParams(refused);
      expect(error).toBeUndefined();
      expect(resourceMetadataUrl?.href).toBe(`${stack.base}/.well-known/oauth-protected-resource`);
      const metadata = await discoverOAuthProtectedResourceMetadata(new URL(`${stack.base}${path}`), {
        resourceMetadataUrl,
      });
      expect(metadata).toMatchObject({
        resource: stack.base,
        authorization_servers: [idp.issuer],
        bearer_methods_supported: ['header'],
      });
    }
    // a token sent and refused says so
    const forged = await get(await idp.sign(rsa, { iss: 'https://evil.example/' }));
    expect(forged.headers.get('www-authenticate')).toMatch(
      /^Bearer realm="parley", error="invalid_token", resource_metadata="/,
    );
  });

  it('answers 401 to a wrong issuer, a wrong audience or an expired token', async () => {
    expect(await statusOf(await idp.sign(rsa, { iss: 'https://evil.example/' }))).toBe(401);
    expect(await statusOf(await idp.sign(ec, { aud: 'another-api' }))).toBe(401);
    const expired = await get(await idp.sign(rsa, { expiresIn: -60 }));
    expect(expired.status).toBe(401);
    expect(await expired.json()).toMatchObject({ message: 'the token has expired' });
  });

  it('answers 401 to alg none, to HS256 signed with the public key, and to HS256 tokens at all', async () => {
    expect(await statusOf(unsignedToken(idp, rsa))).toBe(401);
    expect(await statusOf(await hs256WithPublicKey(idp, rsa))).toBe(401);
    expect(await statusOf(tokenFor('alice-idp'))).toBe(401); // no AUTH_JWT_SECRET configured
  });

  it('answers 401 to a kid the key set lacks, refetching the set once', async () => {
    const stranger = await idp.newKey('RS256', { publish: false });
    await sleep(COOLDOWN_MS + 200); // past the cooldown of the last fetch
    const before = idp.fetches();
    for (let i = 0; i < 3; i++) expect(await statusOf(await idp.sign(stranger))).toBe(401);
    expect(await statusOf(await idp.sign(rsa, { kid: 'no-such-kid' }))).toBe(401);
    expect(idp.fetches()).toBe(before + 1);
  });

  it('finds a key the provider rotated in, by refetching on its unknown kid', async () => {
    const next = await idp.newKey('ES256');
    await sleep(COOLDOWN_MS + 200);
    const before = idp.fetches();
    expect(await statusOf(await idp.sign(next, { sub: 'carol-idp' }))).toBe(200);
    expect(await statusOf(await idp.sign(next, { sub: 'carol-idp' }))).toBe(200);
    expect(idp.fetches()).toBe(before + 1);
  });

  it('takes a provider token as ?access_token= on the SSE stream', async () => {
    const token = await idp.sign(rsa, { sub: 'dora-idp' });
    const created = await fetch(`${stack.base}/v1/conversations`, {
      method: 'POST',
      headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
      body: '{}',
    });
    const { id } = (await created.json()) as { id: string };
    const url = `${stack.base}/v1/conversations/${id}/stream`;
    const abort = new AbortController();
    const ok = await fetch(`${url}?access_token=${encodeURIComponent(token)}`, { signal: abort.signal });
    expect(ok.status).toBe(200);
    expect(ok.headers.get('content-type')).toMatch(/text\/event-stream/);
    abort.abort();
    const wrongAudience = await idp.sign(rsa, { sub: 'dora-idp', aud: 'another-api' });
    expect((await fetch(`${url}?access_token=${encodeURIComponent(wrongAudience)}`)).status).toBe(401);
    expect((await fetch(`${url}?access_token=${encodeURIComponent(unsignedToken(idp, rsa))}`)).status).toBe(401);
  });
});
