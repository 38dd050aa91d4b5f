/**
 * An identity provider as far as Parley sees one: a JWKS endpoint (node:http) serving the public
 * halves of key pairs it made, and a signer for tokens with those keys. Counts the JWKS fetches.
 */
import http from 'node:http';
import { AddressInfo } from 'node:net';
import { randomUUID } from 'node:crypto';
import { exportJWK, exportSPKI, generateKeyPair, JWK, KeyLike, SignJWT } from 'jose';

export type IdpAlg = 'RS256' | 'ES256';

export interface IdpKey {
  kid: string;
  alg: IdpAlg;
  privateKey: KeyLike;
  publicKey: KeyLike;
  publicJwk: JWK;
}

export interface TokenOptions {
  sub?: string;
  iss?: string;
  aud?: string;
  /** seconds from now; negative for an expired token */
  expiresIn?: number;
  /** the `kid` header, when it should differ from the key's */
  kid?: string;
  /** more claims for the payload (e.g. parley_budget_usd_per_month) */
  claims?: Record<string, unknown>;
}

export interface FakeIdp {
  jwksUrl: string;
  issuer: string;
  audience: string;
  /** how many times the key set was fetched */
  fetches(): number;
  /** a new key pair; `publish: false` keeps it out of the key set (an unknown `kid`) */
  newKey(alg: IdpAlg, opts?: { publish?: boolean }): Promise<IdpKey>;
  publish(key: IdpKey): void;
  sign(key: IdpKey, opts?: TokenOptions): Promise<string>;
  close(): Promise<void>;
}

export async function startFakeIdp(): Promise<FakeIdp> {
  const published: JWK[] = [];
  let fetches = 0;
  const server = http.createServer((req, res) => {
    if (req.url !== '/.well-known/jwks.json') {
      res.writeHead(404).end();
      return;
    }
    fetches++;
    res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ keys: published }));
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  const issuer = `${base}/`;
  const audience = 'parley-api';

  const idp: FakeIdp = {
    jwksUrl: `${base}/.well-known/jwks.json`,
    issuer,
    audience,
    fetches: () => fetches,
    async newKey(alg, opts = {}) {
      const { privateKey, publicKey } = await generateKeyPair(alg);
      const kid = `${alg.toLowerCase()}-${randomUUID()}`;
      const publicJwk = { ...(await exportJWK(publicKey)), kid, alg, use: 'sig' };
      const key = { kid, alg, privateKey, publicKey, publicJwk };
      if (opts.publish !== false) idp.publish(key);
      return key;
    },
    publish: (key) => void published.push(key.publicJwk),
    async sign(key, opts = {}) {
      return new SignJWT(opts.claims ?? {})
        .setProtectedHeader({ alg: key.alg, kid: opts.kid ?? key.kid, typ: 'JWT' })
        .setSubject(opts.sub ?? 'alice')
        .setIssuer(opts.iss ?? issuer)
        .setAudience(opts.aud ?? audience)
        .setIssuedAt()
        .setExpirationTime(Math.floor(Date.now() / 1000) + (opts.expiresIn ?? 3600))
        .sign(key.privateKey);
    },
    close: () => new Promise<void>((r) => server.close(() => r())),
  };
  return idp;
}

const b64url = (o: object) => Buffer.from(JSON.stringify(o)).toString('base64url');

function claims(idp: FakeIdp, sub: string) {
  const now = Math.floor(Date.now() / 1000);
  return { sub, iss: idp.issuer, aud: idp.audience, iat: now, exp: now + 3600 };
}

/** `alg: none`, no signature, naming a published key: must never be accepted. */
export function unsignedToken(idp: FakeIdp, key: IdpKey, sub = 'mallory'): string {
  return `${b64url({ alg: 'none', kid: key.kid, typ: 'JWT' })}.${b64url(claims(idp, sub))}.`;
}

/**
 * The algorithm-confusion attack: HS256 with the provider's public key (PEM, as a verifier that
 * feeds "the key" to HMAC would use it) as the secret, naming that key.
 */
export async function hs256WithPublicKey(idp: FakeIdp, key: IdpKey, sub = 'mallory'): Promise<string> {
  const pem = await exportSPKI(key.publicKey);
  return new SignJWT(claims(idp, sub))
    .setProtectedHeader({ alg: 'HS256', kid: key.kid, typ: 'JWT' })
    .sign(new TextEncoder().encode(pem));
}
