import type { FastifyInstance } from 'fastify';
import { webhookUrlOf } from '../domain/webhooks/url.js';
import { boundsText, serializerOf, type AnyOperation } from '../operations/operation.js';
import { NEVER, runCall } from './call-steps.js';
import { clientGoneSignal } from './client-gone.js';
import { accountOf } from './plugins/auth.js';
import { ok } from './reply.js';
import { Type, type TObject } from 'typebox';
import { operationIdOf } from '../operations/names.js';
import { responses } from './schemas/common.js';
import { JobAccepted, WebhookUrlField } from './schemas/jobs.js';
import type { RouteDeps } from './routes/deps.js';
import type { JobView } from '../domain/jobs/types.js';
import { ConflictError } from '../errors.js';

/** RFC 7240: is `respond-async` among the preferences (any case, any parameters, any order)? */
export function prefersRespondAsync(header: string | string[] | undefined): boolean {
  if (header === undefined) return false;
  const text = Array.isArray(header) ? header.join(',') : header;
  if (text.length > 4096) return false;
  return text.split(',').some((pref) => pref.split(';', 1)[0]!.split('=', 1)[0]!.trim().toLowerCase() === 'respond-async');
}

/**
 * What a job of `op` stores of a validated body: the fields its schema declares, at every level,
 * as the schema's serializer writes them (a synchronous call ignores the rest; a job must not keep
 * a megabyte of them per job). Compiled on first use, once per operation.
 */
const declared = new WeakMap<AnyOperation, (value: unknown) => string>();
function declaredFields(op: AnyOperation, body: Record<string, unknown>): Record<string, unknown> {
  let write = declared.get(op);
  if (!write) declared.set(op, (write = serializerOf(op.body)));
  return JSON.parse(write(body)) as Record<string, unknown>;
}

/**
 * A job of `op` for an account, from a body its route's schema validated (`webhook_url` beside
 * the operation's fields): the fields kept, the synchronous call's 400s and 403s checked
 * (precheck, the webhook URL's target), then queued. `answered`: the job starts once it settles.
 * The route's job branch and a job started inside another request (a dashboard check) both use it.
 */
export async function createJob(deps: RouteDeps, op: AnyOperation, accountId: number, sent: Record<string, unknown>, answered?: Promise<unknown>): Promise<JobView> {
  if (!deps.jobs) throw new ConflictError('this server runs no jobs');
  const { webhook_url: rawWebhook, ...fields } = sent;
  const webhookUrl = webhookUrlOf(rawWebhook);
  const body = declaredFields(op, fields);
  // A job takes up to the job's bound of items (a 400 beyond it, before anything is resolved).
  const total = op.items?.(body, op.bounds?.job);
  await op.precheck?.(deps, body);
  if (webhookUrl !== null && deps.jobWebhooks) await deps.jobWebhooks.checkUrl(webhookUrl);
  return deps.jobs.create({ accountId, endpoint: op.path, body, webhookUrl, total }, answered);
}

/** The body schema of an operation's route: the operation's fields, and `webhook_url` beside them for a job. */
export function routeBodyOf(op: AnyOperation): TObject {
  // Every operation's body is an object (the job keeps its fields).
  return Type.Object({ ...(op.body as TObject).properties, webhook_url: WebhookUrlField });
}

/**
 * The route of an operation (src/operations/operation.ts): synchronous, or a job when the client
 * prefers respond-async. Its request passes the steps of src/http/call-steps.ts in the app's
 * hooks; the handler is the run step.
 */
export function registerOperation(app: FastifyInstance, deps: RouteDeps, op: AnyOperation): void {
  app.post(
    op.path,
    {
      ...(op.probe ? { config: { probe: true } } : {}),
      schema: {
        operationId: operationIdOf(op.path),
        summary: op.summary,
        ...(op.bounds ? { description: boundsText(op.bounds) } : {}),
        tags: op.tags,
        body: routeBodyOf(op),
        response: { ...responses(op.data), 202: JobAccepted },
      },
    },
    async (request, reply) => {
      if (deps.jobs && prefersRespondAsync(request.headers.prefer)) {
        // The response's 'close' comes once it is written (or its client is gone): the job starts then.
        const answered = new Promise((resolve) => reply.raw.once('close', resolve));
        const job = await createJob(deps, op, accountOf(request).id, request.body as Record<string, unknown>, answered);
        reply.code(202).header('location', `/api/jobs/${job.id}`).header('preference-applied', 'respond-async');
        return ok(job, `job ${job.id} queued: ${op.path}`);
      }
      // A probe stops when its client hangs up; no listener is made for the others.
      const { data, message } = await runCall(op, deps, request.body, op.probe ? clientGoneSignal(reply) : NEVER);
      return ok(data, message);
    },
  );
}
