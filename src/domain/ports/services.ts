import { readFileSync } from 'node:fs';

/** Service names of well-known TCP ports, from IANA's registry (see data/README.md). */
export const SERVICES_FILE = new URL('./data/services-tcp.json', import.meta.url);

const names = new Map<number, string>(
  Object.entries(JSON.parse(readFileSync(SERVICES_FILE, 'utf8')) as Record<string, string>).map(([port, name]) => [Number(port), name]),
);

/** IANA's name for a TCP port, or null when the port has no well-known service. */
export function serviceName(port: number): string | null {
  return names.get(port) ?? null;
}
