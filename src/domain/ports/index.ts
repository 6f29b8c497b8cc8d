export { PortScanner, normalizePorts, tallyOf, type PortResult, type ScanTally, type PortState, type ScanOptions, type ScanDialer, type PortScannerOptions } from './scanner.js';
export { PRESETS, PRESET_NAMES, expandPortList, type PresetName } from './presets.js';
export { parsePortSpec } from './port-spec.js';
export { serviceName, SERVICES_FILE } from './services.js';
export * from './defaults.js';
