import { loadConfig } from './config';

const dev = { NODE_ENV: 'development' } as const;

describe('CORS_ORIGINS', () => {
  it('is off unset: no origin', () => {
    expect(loadConfig(dev).cors.origins).toEqual([]);
  });

  it('takes exact origins, comma-separated, and * as an explicit choice', () => {
    expect(loadConfig({ ...dev, CORS_ORIGINS: 'https://app.example.com, http://localhost:5173' }).cors.origins).toEqual(
      ['https://app.example.com', 'http://localhost:5173'],
    );
    expect(loadConfig({ ...dev, CORS_ORIGINS: '*' }).cors.origins).toEqual(['*']);
  });

  it.each([
    'app.example.com',
    'https://app.example.com/',
    'https://app.example.com/path',
    'ftp://x.example',
    'https://*.example.com',
  ])('stops boot on %s, naming it', (origin) => {
    expect(() => loadConfig({ ...dev, CORS_ORIGINS: origin })).toThrow(/CORS_ORIGINS.*expected origins/s);
  });
});

describe('WEBHOOKS_*', () => {
  it('refuses private URLs, retries 8 times from 30 s and sends 2 at once per endpoint, 8 per reader by default', () => {
    expect(loadConfig(dev).webhooks).toEqual({
      allowPrivateUrls: false,
      maxAttempts: 8,
      retryBaseMs: 30_000,
      retryMaxMs: 3_600_000,
      timeoutMs: 10_000,
      inFlightPerEndpoint: 2,
      inFlightPerReader: 8,
    });
  });

  it('reads the operator’s choices; the longest pause is never below the first', () => {
    const sut = loadConfig({
      ...dev,
      WEBHOOKS_ALLOW_PRIVATE_URLS: 'true',
      WEBHOOKS_RETRY_BASE_MS: '5000',
      WEBHOOKS_RETRY_MAX_MS: '1000',
    }).webhooks;
    expect(sut.allowPrivateUrls).toBe(true);
    expect(sut.retryMaxMs).toBe(5000);
    expect(() => loadConfig({ ...dev, WEBHOOKS_MAX_ATTEMPTS: '0' })).toThrow(/WEBHOOKS_MAX_ATTEMPTS/);
    expect(loadConfig({ ...dev, WEBHOOKS_IN_FLIGHT_PER_READER: '3' }).webhooks.inFlightPerReader).toBe(3);
    expect(() => loadConfig({ ...dev, WEBHOOKS_IN_FLIGHT_PER_ENDPOINT: '0' })).toThrow(
      /WEBHOOKS_IN_FLIGHT_PER_ENDPOINT/,
    );
  });
});
