import { checkWebhookUrl, isPublicAddress, parseWebhookUrl, Resolver, WebhookUrlRefused } from './webhook-url';

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

  it('refuses a name when any of its addresses is private, naming it', async () => {
    await expect(checkWebhookUrl('https://split.example.com/', { allowPrivate: false, resolve })).rejects.toThrow(
      /10\.0\.0\.7/,
    );
    await expect(checkWebhookUrl('https://inside.example.com/', { allowPrivate: false, resolve })).rejects.toThrow(
      WebhookUrlRefused,
    );
  });

  it('refuses a name that does not resolve, and address literals without asking DNS', async () => {
    await expect(checkWebhookUrl('https://gone.example.com/', { allowPrivate: false, resolve })).rejects.toThrow(
      /does not resolve/,
    );
    const never: Resolver = () => Promise.reject(new Error('asked'));
    await expect(checkWebhookUrl('http://[::1]:8080/', { allowPrivate: false, resolve: never })).rejects.toThrow(/::1/);
    await expect(checkWebhookUrl('http://0x7f000001/', { allowPrivate: false, resolve: never })).rejects.toThrow(
      /127\.0\.0\.1/,
    );
  });

  it('allows private addresses when the operator does', async () => {
    const never: Resolver = () => Promise.reject(new Error('asked'));
    await expect(
      checkWebhookUrl('http://127.0.0.1:9000/', { allowPrivate: true, resolve: never }),
    ).resolves.toBeInstanceOf(URL);
  });
});
