export { LeasedQueue, leaseHolder, type Chore, type LeasedQueueOptions, type LeasedRun, type LeasedWork } from './leased-queue.js';
export { takeInTurn, type Turn } from './in-turn.js';
