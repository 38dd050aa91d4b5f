import {
  checkWebhookUrl,
  isPublicAddress,
  NOT_PUBLIC_HOST,
  parseWebhookUrl,
  Resolver,
  WebhookUrlRefused,
} from './webhook-url';

/** A resolver that answers from a table, as DNS would. */
const resolving =
  (table: Record<string, string[]>): Resolver =>
  async (hostname) => {
    const addresses = table[hostname];
    if (!addresses) throw Object.assign(new Error('not found'), { code: 'ENOTFOUND' });
    return addresses.map((address) => ({ address, family: address.includes(':') ? 6 : 4 }));
  };

describe(isPublicAddress.name, () => {
  it.each([
    '127.0.0.1',
    '127.255.0.9',
    '10.0.0.1',
    '172.31.255.255',
    '192.168.0.1',
    '169.254.169.254',
    '100.64.0.1',
    '0.0.0.0',
    '224.0.0.1',
    '255.255.255.255',
    '::1',
    '::',
    '::ffff:127.0.0.1',
    '::ffff:10.0.0.1',
    // IPv4-compatible (::/96) and IPv4-translated (::ffff:0:0:0/96): refused whatever they embed
    '::127.0.0.1',
    '::7f00:1',
    '::8.8.8.8',
    '::ffff:0:127.0.0.1',
    '::ffff:0:8.8.8.8',
    'fd12:3456::1',
    'fe80::1',
    'ff02::1',
    '2001:db8::1',
    'not an address',
  ])('refuses %s', (address) => expect(isPublicAddress(address)).toBe(false));

  it.each(['93.184.215.14', '8.8.8.8', '172.32.0.1', '2606:4700::1111', '::ffff:8.8.8.8'])('allows %s', (address) =>
    expect(isPublicAddress(address)).toBe(true),
  );
});

describe(parseWebhookUrl.name, () => {
  it.each(['ftp://example.com/x', 'https://u:p@example.com/', 'example.com/hook', 'x'.repeat(3000)])(
    'refuses %s',
    (url) => expect(() => parseWebhookUrl(url)).toThrow(WebhookUrlRefused),
  );
});

describe(checkWebhookUrl.name, () => {
  const resolve = resolving({
    'hooks.example.com': ['93.184.215.14', '2606:4700::1111'],
    'split.example.com': ['93.184.215.14', '10.0.0.7'],
    'inside.example.com': ['192.168.1.20'],
  });

  it('lets a name through when every address it resolves to is public', async () => {
    await expect(
      checkWebhookUrl('https://hooks.example.com/parley', { allowPrivate: false, resolve }),
    ).resolves.toBeInstanceOf(URL);
  });

  /** The refusal of `url`: its message for the reader, its detail for the log. */
  const refusal = (url: string, r: Resolver = resolve) =>
    checkWebhookUrl(url, { allowPrivate: false, resolve: r }).then(
      () => {
        throw new Error(`${url} was let through`);
      },
      (e: WebhookUrlRefused) => ({ refused: e instanceof WebhookUrlRefused, message: e.message, detail: e.detail }),
    );

  it('refuses a name when any of its addresses is private, telling the reader nothing of them (the log is told)', async () => {
    expect(await refusal('https://split.example.com/')).toEqual({
      refused: true,
      message: NOT_PUBLIC_HOST,
      detail: expect.stringContaining('10.0.0.7'),
    });
    expect(await refusal('https://inside.example.com/')).toEqual({
      refused: true,
      message: NOT_PUBLIC_HOST,
      detail: expect.stringContaining('192.168.1.20'),
    });
  });

  it('refuses a name that does not resolve with the same words as one that leads inside', async () => {
    expect(await refusal('https://gone.example.com/')).toEqual({
      refused: true,
      message: NOT_PUBLIC_HOST,
      detail: 'gone.example.com does not resolve (ENOTFOUND)',
    });
  });

  it('refuses address literals without asking DNS, the IPv4-compatible and -translated loopbacks too', async () => {
    const never: Resolver = () => Promise.reject(new Error('asked'));
    for (const [url, address] of [
      ['http://[::1]:8080/', '::1'],
      ['http://0x7f000001/', '127.0.0.1'],
      ['http://[::127.0.0.1]/', '::7f00:1'],
      ['http://[::ffff:0:127.0.0.1]/', '::ffff:0:7f00:1'],
    ])
      expect(await refusal(url, never)).toEqual({
        refused: true,
        message: NOT_PUBLIC_HOST,
        detail: expect.stringContaining(address),
      });
  });

  it('allows private addresses when the operator does', async () => {
    const never: Resolver = () => Promise.reject(new Error('asked'));
    await expect(
      checkWebhookUrl('http://127.0.0.1:9000/', { allowPrivate: true, resolve: never }),
    ).resolves.toBeInstanceOf(URL);
  });
});
