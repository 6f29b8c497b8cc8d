/**
 * @netdiag/client: the netdiag API from TypeScript (Node ≥ 20 and browsers; verifyWebhook needs
 * node:crypto). One typed method per operation, generated from the server's OpenAPI document,
 * and the jobs around them: submit, wait, stream, verifyWebhook.
 */
export { createClient, type ClientOptions, type NetdiagClient, type RequestInit, type SubmitOptions } from './client.js';
export { NetdiagConnectionError, NetdiagError, WebhookVerificationError, type ErrorBody } from './errors.js';
export type { Operations } from './generated/operations.js';
export type { components, paths } from './generated/schema.js';
export type { StreamOptions } from './stream.js';
export type { Answer, CallOptions, Job, JobBody, JobEvent, JobPath, JobStatus, Method, Query, WebhookEvent } from './types.js';
export { verifyWebhook, type VerifyOptions } from './webhooks.js';
