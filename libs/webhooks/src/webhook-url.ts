import { lookup as dnsLookup, LookupAddress } from 'node:dns';
import { BlockList, isIP } from 'node:net';

/**
 * Why a webhook URL is refused (docs/webhooks.md, "What URLs are refused"). The message is for
 * the reader; `detail` (what the name resolved to, or the resolver's error) is for the server's
 * log only, so registering URLs cannot be used to ask this network's resolver about its names.
 */
export class WebhookUrlRefused extends Error {
  constructor(
    message: string,
    readonly detail: string = message,
  ) {
    super(message);
  }
}

/** The one answer for every host that is, or resolves to, no public address: it tells nothing of the resolver. */
export const NOT_PUBLIC_HOST = 'its host is not a public address, or does not resolve to one';

/** The longest URL an endpoint may have. */
export const WEBHOOK_URL_MAX_CHARS = 2048;

/**
 * Addresses a webhook may not reach (SSRF): this host, its network and the provider's: loopback,
 * link-local (cloud metadata at 169.254.169.254), private and shared ranges, and the reserved,
 * documentation, benchmarking and multicast ones. IPv4-mapped IPv6 addresses are checked as IPv4;
 * the IPv4-compatible (::/96) and IPv4-translated (::ffff:0:0:0/96) forms are refused outright:
 * deprecated, never a public receiver, and ::127.0.0.1 may still reach loopback.
 */
const NOT_PUBLIC = new BlockList();
for (const [net, prefix] of [
  ['0.0.0.0', 8],
  ['10.0.0.0', 8],
  ['100.64.0.0', 10],
  ['127.0.0.0', 8],
  ['169.254.0.0', 16],
  ['172.16.0.0', 12],
  ['192.0.0.0', 24],
  ['192.0.2.0', 24],
  ['192.88.99.0', 24],
  ['192.168.0.0', 16],
  ['198.18.0.0', 15],
  ['198.51.100.0', 24],
  ['203.0.113.0', 24],
  ['224.0.0.0', 4],
  ['240.0.0.0', 4],
] as const)
  NOT_PUBLIC.addSubnet(net, prefix, 'ipv4');
for (const [net, prefix] of [
  ['::', 96],
  ['::ffff:0:0:0', 96],
  ['64:ff9b::', 96],
  ['64:ff9b:1::', 48],
  ['100::', 64],
  ['2001::', 23],
  ['2001:db8::', 32],
  ['2002::', 16],
  ['fc00::', 7],
  ['fe80::', 10],
  ['fec0::', 10],
  ['ff00::', 8],
] as const)
  NOT_PUBLIC.addSubnet(net, prefix, 'ipv6');

/** Whether an IP address is a public one a webhook may reach. */
export function isPublicAddress(address: string): boolean {
  const family = isIP(address);
  if (family === 0) return false;
  return !NOT_PUBLIC.check(address, family === 4 ? 'ipv4' : 'ipv6');
}

/** The URL's form: http(s), a host, no credentials, not too long. Throws WebhookUrlRefused. */
export function parseWebhookUrl(raw: string): URL {
  if (raw.length > WEBHOOK_URL_MAX_CHARS)
    throw new WebhookUrlRefused(`longer than ${WEBHOOK_URL_MAX_CHARS} characters`);
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    throw new WebhookUrlRefused('not an absolute URL');
  }
  if (url.protocol !== 'https:' && url.protocol !== 'http:') throw new WebhookUrlRefused('only http and https URLs');
  if (url.username || url.password) throw new WebhookUrlRefused('credentials in the URL are not allowed');
  if (!url.hostname) throw new WebhookUrlRefused('no host');
  return url;
}

/** The URL's host as an address literal (brackets off), or null for a name. */
function addressLiteral(url: URL): string | null {
  const host = url.hostname.replace(/^\[(.*)\]$/, '$1');
  return isIP(host) ? host : null;
}

export type Resolver = (hostname: string) => Promise<LookupAddress[]>;

/** Every address the system resolver gives for a name (as a connection would look it up). */
export const systemResolver: Resolver = (hostname) =>
  new Promise((resolve, reject) =>
    dnsLookup(hostname, { all: true, verbatim: true }, (err, addresses) => (err ? reject(err) : resolve(addresses))),
  );

/**
 * Checks where a webhook URL leads: unless private URLs are allowed, its host (an address, or
 * every address its name resolves to) must be public. Throws WebhookUrlRefused.
 */
export async function checkWebhookUrl(raw: string, opts: { allowPrivate: boolean; resolve?: Resolver }): Promise<URL> {
  const url = parseWebhookUrl(raw);
  if (opts.allowPrivate) return url;
  const literal = addressLiteral(url);
  const addresses = literal
    ? [literal]
    : await (opts.resolve ?? systemResolver)(url.hostname).then(
        (found) => found.map((a) => a.address),
        (e: NodeJS.ErrnoException) => {
          throw new WebhookUrlRefused(NOT_PUBLIC_HOST, `${url.hostname} does not resolve (${e.code ?? e.message})`);
        },
      );
  if (addresses.length === 0) throw new WebhookUrlRefused(NOT_PUBLIC_HOST, `${url.hostname} does not resolve`);
  const refused = addresses.filter((a) => !isPublicAddress(a));
  if (refused.length > 0)
    throw new WebhookUrlRefused(NOT_PUBLIC_HOST, `${url.hostname} leads to ${refused.join(', ')}: not public`);
  return url;
}

/**
 * The `lookup` a delivery's connection uses: it resolves the name, refuses the connection when
 * any address is not public (unless allowed), and connects to an address it checked, so a name
 * that changed its answer since registration (DNS rebinding) cannot lead inside.
 */
export function guardedLookup(allowPrivate: boolean, resolve: Resolver = systemResolver) {
  return (
    hostname: string,
    options: { all?: boolean; family?: number | string },
    callback: (err: NodeJS.ErrnoException | null, address: string | LookupAddress[], family?: number) => void,
  ): void => {
    resolve(hostname).then(
      (addresses) => {
        const refused = allowPrivate ? [] : addresses.filter((a) => !isPublicAddress(a.address));
        if (addresses.length === 0 || refused.length > 0) {
          const err: NodeJS.ErrnoException = new WebhookUrlRefused(
            NOT_PUBLIC_HOST,
            `${hostname} leads to ${refused.map((a) => a.address).join(', ') || 'nothing'}: not public`,
          );
          err.code = 'EWEBHOOKREFUSED';
          return callback(err, []);
        }
        if (options.all) return callback(null, addresses);
        callback(null, addresses[0].address, addresses[0].family);
      },
      (e: NodeJS.ErrnoException) => callback(e, []),
    );
  };
}

/** The address literal of a URL that a delivery must refuse before connecting (lookup is not asked for literals). */
export function refusedLiteral(url: URL, allowPrivate: boolean): string | null {
  const literal = addressLiteral(url);
  return literal && !allowPrivate && !isPublicAddress(literal) ? literal : null;
}
