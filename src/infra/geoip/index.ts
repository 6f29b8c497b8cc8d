
export { ATTRIBUTION, EmptyGeoReader, bundledData, createGeoReader, type BundledData, type GeoPart, type GeoReaderOptions, type ReloadableGeoReader } from './geo-reader.js';
export { MmdbCityReader } from './mmdb-city-reader.js';
export { MmdbAsnReader } from './mmdb-asn-reader.js';
export { CsvAsnReader, type CsvAsnFiles } from './csv-asn-reader.js';

export { watchGeoFiles, type GeoWatch, type GeoWatchOptions } from './watch.js';
