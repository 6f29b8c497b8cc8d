
export { ATTRIBUTION, EmptyGeoReader, bundledData, createGeoReader, type BundledData, type GeoReaderOptions } from './geo-reader.js';
export { MmdbCityReader } from './mmdb-city-reader.js';
export { MmdbAsnReader } from './mmdb-asn-reader.js';
export { CsvAsnReader, type CsvAsnFiles } from './csv-asn-reader.js';

