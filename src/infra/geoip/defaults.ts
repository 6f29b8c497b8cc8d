/**
 * Defaults of the GeoIP readers, in one place (milliseconds).
 */

/**
 * A change seen on an operator's file is acted on once the file has been quiet this long: a
 * copy in place writes many chunks, each an event; reading in the middle would fail (and keep
 * the old data) only to be read again at the next event.
 */
export const GEOIP_RELOAD_DEBOUNCE_MS = 500;

/**
 * Every this often each operator file is stat'ed as well: fs.watch misses changes on some file
 * systems (NFS, some container mounts) and after its directory was itself replaced.
 */
export const GEOIP_POLL_MS = 5_000;
