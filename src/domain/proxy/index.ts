/** The proxy checker: input forms, protocol detection, judge, anonymity, ssl, speed, location, bulk. */
export { ProxyChecker, DEFAULT_TIMEOUTS, type ProxyCheckerOptions } from './checker.js';
export { ALL_NONCE_USES, Judge, MemoryJudgeLedger, normalizeAddress } from './judge.js';
export { JudgeDirectory, JudgeTarget, OwnAddresses, defaultJudgeUrl, judgeHealth, parseEcho, parseUploadReceipt, type JudgeUrlRecord } from './judge-client.js';
export { redactProxyInput } from './redact.js';
export type { NonceUse } from './judge-repository.js';
export { judgeAnonymity, addressesIn, announcesProxy, type AnonymityVerdict } from './anonymity.js';
export { parseProxy, hostPortText } from './parse.js';
export type { Timeouts } from './detect.js';
export * from './defaults.js';
export * from './types.js';
