import { watch, type FSWatcher } from 'node:fs';
import { basename, dirname } from 'node:path';
import { GEOIP_POLL_MS, GEOIP_RELOAD_DEBOUNCE_MS } from './defaults.js';
import type { GeoPart, ReloadableGeoReader } from './geo-reader.js';

export interface GeoWatchOptions {
  /** Where reloads are told: `info` when new data is in use, `warn` when a new file was refused (the old data stays). */
  log: { info: (obj: object, msg: string) => void; warn: (obj: object, msg: string) => void };
  debounceMs?: number;
  pollMs?: number;
  /** false: the stat poll alone (tests of the fallback). */
  useFsWatch?: boolean;
}

export interface GeoWatch {
  /** Reads every operator file again now, changed or not (SIGHUP); never rejects, the outcome is logged; nothing once closed. */
  reloadAll(): Promise<void>;
  close(): void;
}

const VARIABLE: Record<GeoPart, string> = { city: 'NETDIAG_GEOIP_CITY_DB', asn: 'NETDIAG_GEOIP_ASN_DB' };

/**
 * Re-reads the operator's GeoIP files (NETDIAG_GEOIP_CITY_DB / NETDIAG_GEOIP_ASN_DB) when they
 * change on disk, without a restart: fs.watch on each file's DIRECTORY (a file replaced by a
 * rename is a new inode, which a watch on the file itself would lose), plus a stat poll for file
 * systems that send no events; both debounced, and a reload happens only when the file's size,
 * modification time or inode differ from what was read. The reader swaps a new database in only
 * after it opened fine, so a half-written or broken file keeps the old data (logged) until the
 * next change. Nothing is watched when no operator file is configured (the bundled data does
 * not change under a running process).
 */
export function watchGeoFiles(reader: ReloadableGeoReader, opts: GeoWatchOptions): GeoWatch {
  const debounceMs = opts.debounceMs ?? GEOIP_RELOAD_DEBOUNCE_MS;
  const parts = (Object.keys(reader.files) as GeoPart[]).filter((p) => reader.files[p]);
  const timers = new Map<GeoPart, NodeJS.Timeout>();
  const watchers: FSWatcher[] = [];
  let closed = false;

  const reload = async (part: GeoPart, force: boolean): Promise<void> => {
    // Closed: a timer that already fired, or a SIGHUP after shutdown began, reads nothing.
    if (closed) return;
    const path = reader.files[part]!;
    try {
      const swapped = await reader.reload(part, force);
      if (swapped) opts.log.info({ part, path, buildDate: swapped.buildDate }, `GeoIP ${part} data reloaded from ${VARIABLE[part]}`);
    } catch (err) {
      opts.log.warn({ err, part, path }, `GeoIP ${part} file could not be read again; the data read before stays in use`);
    }
  };

  const schedule = (part: GeoPart): void => {
    if (closed) return;
    clearTimeout(timers.get(part));
    const timer = setTimeout(() => {
      timers.delete(part);
      void reload(part, false);
    }, debounceMs);
    timer.unref();
    timers.set(part, timer);
  };

  if (opts.useFsWatch !== false) {
    // One watcher per directory, whatever the number of files in it.
    const byDir = new Map<string, GeoPart[]>();
    for (const part of parts) {
      const dir = dirname(reader.files[part]!);
      byDir.set(dir, [...(byDir.get(dir) ?? []), part]);
    }
    for (const [dir, inDir] of byDir) {
      try {
        const watcher = watch(dir, { persistent: false }, (_event, filename) => {
          for (const part of inDir) {
            // No name (some platforms): any change in the directory may be ours.
            if (filename === null || filename === basename(reader.files[part]!)) schedule(part);
          }
        });
        watcher.on('error', (err) => opts.log.warn({ err, dir }, 'GeoIP: watching the directory failed; polling the files instead'));
        watchers.push(watcher);
      } catch (err) {
        opts.log.warn({ err, dir }, 'GeoIP: the directory cannot be watched; polling the files instead');
      }
    }
  }
  const poll = parts.length > 0 ? setInterval(() => parts.forEach(schedule), opts.pollMs ?? GEOIP_POLL_MS) : undefined;
  poll?.unref();

  return {
    async reloadAll() {
      await Promise.all(parts.map((part) => reload(part, true)));
    },
    close() {
      closed = true;
      clearInterval(poll);
      for (const timer of timers.values()) clearTimeout(timer);
      timers.clear();
      for (const w of watchers) w.close();
    },
  };
}
