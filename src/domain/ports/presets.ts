import { parsePortSpec } from './port-spec.js';

/** The port groups of POST /port/scan-common. */

/** Expands "7,9,21-23" into its ports: the parser of a client's `ports` string, so presets obey the same bounds. */
export function expandPortList(spec: string): number[] {
  return parsePortSpec(spec, 'preset');
}

/** nmap's 100 most frequent TCP ports (`nmap -F`), exactly as docs/ports.md lists them. */
const TOP100 =
  '7,9,13,21-23,25-26,37,53,79-81,88,106,110-111,113,119,135,139,143-144,179,199,389,427,443-445,465,513-515,' +
  '543-544,548,554,587,631,646,873,990,993,995,1025-1029,1110,1433,1720,1723,1755,1900,2000-2001,2049,2121,2717,' +
  '3000,3128,3306,3389,3986,4899,5000,5009,5051,5060,5101,5190,5357,5432,5631,5666,5800,5900,6000-6001,6646,7070,' +
  '8000,8008-8009,8080-8081,8443,8888,9100,9999-10000,32768,49152-49157';

export const PRESETS = {
  top100: expandPortList(TOP100),
  // HTTP and HTTPS, the alternates proxies, app servers and admin consoles sit on, and the
  // development servers (3000 Node/Rails, 5000 Flask, 8000 Django) that end up exposed.
  web: expandPortList('80-81,443,591,3000,4443,5000,8000,8008,8080-8081,8088,8443,8888,9000,9443'),
  // SMTP, submission (587) and its implicit-TLS port (465), POP3/IMAP and their TLS ports,
  // the alternate SMTP port of hosting providers (2525) and ManageSieve (4190).
  mail: expandPortList('25,110,143,465,587,993,995,2525,4190'),
  // SQL (MS SQL, Oracle, Firebird, MySQL/MariaDB, PostgreSQL, CockroachDB, DB2), NoSQL
  // (CouchDB, Neo4j, Cassandra, MongoDB, RethinkDB), caches (Redis, Memcached), time series
  // and analytics (InfluxDB, ClickHouse) and search (Elasticsearch/OpenSearch).
  database: expandPortList('1433,1521,3050,3306,5432,5984,6379,7474,7687,8086,8123,9042,9200,9300,11211,26257,27017-27018,28015,50000'),
} as const satisfies Record<string, readonly number[]>;

export type PresetName = keyof typeof PRESETS;

export const PRESET_NAMES = Object.keys(PRESETS) as PresetName[];
