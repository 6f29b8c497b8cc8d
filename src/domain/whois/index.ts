export { WhoisService, createWhoisService, type WhoisServiceOptions } from './service.js';
export type { WhoisDialer, WhoisFields, WhoisHopReport, WhoisResult, WhoisServerAddress } from './types.js';
export { parseWhois } from './parser.js';
