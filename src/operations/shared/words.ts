/**
 * A field name as a person reads it beside a form field or a result: one table of the words that
 * people write another way, for the Checks forms and the result views alike.
 */

/** Words a field name holds that people write another way. */
const WORDS: Record<string, string> = {
  ip: 'IP', ips: 'IPs', ipv4: 'IPv4', ipv6: 'IPv6', url: 'URL', http: 'HTTP', https: 'HTTPS', tls: 'TLS', ssl: 'TLS', dns: 'DNS',
  dnssec: 'DNSSEC', ttl: 'TTL', asn: 'AS', rdap: 'RDAP', whois: 'WHOIS', sha256: 'SHA-256', alpn: 'ALPN', san: 'Names (SAN)',
  ttfb: 'first byte', mdev: 'deviation', cidr: 'CIDR', id: 'ID', sni: 'SNI',
};

/** 'registrar_url' → 'Registrar URL', 'body_sha256' → 'Body SHA-256', 'check_ssl' → 'Check TLS'. */
export function labelOf(key: string): string {
  const t = key
    .split(/[_\s]+/)
    .map((w) => WORDS[w.toLowerCase()] ?? w)
    .join(' ');
  return t.charAt(0).toUpperCase() + t.slice(1);
}
