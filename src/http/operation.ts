import type { FastifyInstance } from 'fastify';
import { webhookUrlOf } from '../domain/webhooks/url.js';
import { runOperation, serializerOf, type AnyOperation } from '../operations/operation.js';
import { clientGoneSignal } from './client-gone.js';
import { accountOf } from './plugins/auth.js';
import { ok } from './reply.js';
import { Type, type TObject } from 'typebox';
import { operationIdOf } from '../operations/names.js';
import { responses } from './schemas/common.js';
import { JobAccepted, WebhookUrlField } from './schemas/jobs.js';
import type { RouteDeps } from './routes/deps.js';

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
 * a megabyte of them per job). Compiled on first use.
 */
function declaredFields(op: AnyOperation): (body: Record<string, unknown>) => Record<string, unknown> {
  let write: ((value: unknown) => string) | undefined;
  return (body) => JSON.parse((write ??= serializerOf(op.body))(body)) as Record<string, unknown>;
}

/** A signal that never aborts: operations that ignore client hang-ups need no listener per request. */
export const NEVER = new AbortController().signal;

/** The body schema of an operation's route: the operation's fields, and `webhook_url` beside them for a job. */
export function routeBodyOf(op: AnyOperation): TObject {
  // Every operation's body is an object (the job keeps its fields).
  return Type.Object({ ...(op.body as TObject).properties, webhook_url: WebhookUrlField });
}

/**
 * The route of an operation (src/operations/operation.ts): synchronous, or a job when the client
 * prefers respond-async.
 */
export function registerOperation(app: FastifyInstance, deps: RouteDeps, op: AnyOperation): void {
  const jobBody = declaredFields(op);
  app.post(
    op.path,
    {
      ...(op.probe ? { config: { probe: true } } : {}),
      schema: {
        operationId: operationIdOf(op.path),
        summary: op.summary,
        tags: op.tags,
        body: routeBodyOf(op),
        response: { ...responses(op.data), 202: JobAccepted },
      },
    },
    async (request, reply) => {
      if (deps.jobs && prefersRespondAsync(request.headers.prefer)) {
        const { webhook_url: rawWebhook, ...sent } = request.body as Record<string, unknown>;
        const webhookUrl = webhookUrlOf(rawWebhook);
        const body = jobBody(sent);
        await op.precheck?.(deps, body);
        if (webhookUrl !== null && deps.jobWebhooks) await deps.jobWebhooks.checkUrl(webhookUrl);
        // The response's 'close' comes once it is written (or its client is gone): the job starts then.
        const answered = new Promise((resolve) => reply.raw.once('close', resolve));
        const job = await deps.jobs.create({ accountId: accountOf(request).id, endpoint: op.path, body, webhookUrl, total: op.items?.(body) }, answered);
        reply.code(202).header('location', `/api/jobs/${job.id}`).header('preference-applied', 'respond-async');
        return ok(job, `job ${job.id} queued: ${op.path}`);
      }
      const { data, message } = await runOperation(op, deps, request.body, { signal: op.probe ? clientGoneSignal(reply) : NEVER });
      return ok(data, message);
    },
  );
}
