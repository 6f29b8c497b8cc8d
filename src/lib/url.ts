/** The host and port of an http(s) URL as the dialer takes them; shared by the domain, infra and operations. */

/** The host of a URL as the dialer takes it: an IPv6 literal without its brackets. */
export function hostOf(url: URL): string {
  return url.hostname.startsWith('[') ? url.hostname.slice(1, -1) : url.hostname;
}

/** The URL's port, else the default of its scheme (443 for https:, 80 otherwise). */
export function portOf(url: URL): number {
  return url.port !== '' ? Number(url.port) : url.protocol === 'https:' ? 443 : 80;
}
