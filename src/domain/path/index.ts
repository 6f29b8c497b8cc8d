export { PathTools, icmpPingStatistics, type IcmpPingOptions, type MtrOptions, type PathCallContext, type PathToolsDeps, type TracerouteOptions } from './service.js';
export type * from './types.js';
export * from './defaults.js';
