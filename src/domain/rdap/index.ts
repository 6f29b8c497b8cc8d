export { RdapService, type RdapDomainResult, type RdapNetworkResult, type RdapServiceOptions } from './service.js';
export { BootstrapRegistry, parseBootstrap, snapshot, type BootstrapFile } from './bootstrap.js';
export { RegistrationLookup, type RegistrationResult } from './registration.js';
export { parseAsn, parseIpQuery, whoisQuery } from './query.js';
export type { BootstrapKind, BootstrapSource, RdapHopReport, RdapHttp, RdapHttpResponse } from './types.js';
export * from './defaults.js';
export { decodeAnswer, inlineDecoder, type AnswerKind, type DecodedAnswer, type RdapDecoder } from './decode.js';
