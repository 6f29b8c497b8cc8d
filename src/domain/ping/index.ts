export { pingStatistics, TcpPinger, type PingDialer, type PingOutcome, type TcpPingOptions, type TcpPingResult } from './tcp-ping.js';
export * from './defaults.js';
