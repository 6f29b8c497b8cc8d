/** Words of an operation's path under /api: '/dns/lookup-bulk' → ['dns', 'lookup-bulk']. */
export function pathWords(path: string): string[] { return path.split('/').filter((w) => w !== '' && !w.startsWith(':') && !w.startsWith('{')); }
/** The operationId and client method: '/dns/lookup-bulk' → 'dnsLookupBulk'. */
export function operationIdOf(path: string): string { return pathWords(path).join('-').replace(/-([a-z0-9])/g, (_, c: string) => c.toUpperCase()); }
/** The MCP tool name: '/dns/lookup-bulk' → 'dns_lookup_bulk'. */
export function toolNameOf(path: string): string { return pathWords(path).join('_').replace(/-/g, '_'); }
