/**
 * Rebuilds services-tcp.json from an IANA-derived services(5) file (Debian's netbase
 * /etc/services by default): the first name given for each TCP port, aliases dropped.
 *
 *   node --import tsx src/domain/ports/data/generate-services.ts [/etc/services]
 */
import { readFileSync, writeFileSync } from 'node:fs';

const source = process.argv[2] ?? '/etc/services';
const services: Record<string, string> = {};
for (const line of readFileSync(source, 'utf8').split('\n')) {
  const m = /^([A-Za-z0-9][\w.+-]*)\s+(\d{1,5})\/tcp\b/.exec(line);
  if (!m) continue;
  const port = Number(m[2]);
  // services(5) may list a port twice (an old and a new name); the first is IANA's primary.
  if (port >= 1 && port <= 65535 && !(port in services)) services[port] = m[1]!;
}
const out = new URL('./services-tcp.json', import.meta.url);
writeFileSync(out, JSON.stringify(services, null, 0) + '\n');
console.log(`${Object.keys(services).length} TCP services from ${source} -> ${out.pathname}`);
