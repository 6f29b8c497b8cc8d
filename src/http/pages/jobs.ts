import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { JOB_STATUSES, type JobStatus, type JobView } from '../../domain/jobs/types.js';
import { ValidationError } from '../../errors.js';
import { shownProxyInput } from '../../domain/proxy/redact.js';
import type { PageDeps } from './deps.js';
import { pageTime, render } from './render.js';

/** Jobs a page lists at a time (the API's default page). */
export const JOBS_PAGE_SIZE = 20;

/** What the list shows of a job: status and progress, never its result (that is the API's; none is read for it). */
interface JobRow {
  id: string;
  endpoint: string;
  /** What was checked: the body's target, or how many entries a bulk call had. */
  subject: string;
  status: JobStatus;
  done: number;
  total: number;
  created: string;
  createdIso: string;
  finished: string;
  error: string | null;
  webhook: string | null;
  deliveries: number;
  cancellable: boolean;
}

/** Fields that name what a check was about, in the order they are looked for. */
const SUBJECT_FIELDS = ['host', 'domain', 'ip', 'url', 'target', 'proxy', 'ipv6', 'query', 'asn'];
/** The longest subject a row shows; the job's page has the rest. */
const SUBJECT_MAX_CHARS = 60;

/** 'example.com', '50 domains', '203.0.113.7:8080:user:***': what a job checked, in a few words. */
export function subjectOf(body: unknown): string {
  if (typeof body !== 'object' || body === null) return '—';
  const b = body as Record<string, unknown>;
  for (const field of SUBJECT_FIELDS) {
    const v = b[field];
    if (typeof v === 'string' || typeof v === 'number') return clip(field === 'proxy' ? shownProxyInput(String(v)) : String(v));
  }
  for (const [field, v] of Object.entries(b)) if (Array.isArray(v) && v.length > 0) return `${v.length} ${v.length === 1 ? field.replace(/s$/, '') : field}`;
  return '—';
}

function clip(text: string): string {
  return text.length > SUBJECT_MAX_CHARS ? `${text.slice(0, SUBJECT_MAX_CHARS - 1)}…` : text;
}

function rowOf(job: JobView, body: unknown): JobRow {
  return {
    id: job.id,
    endpoint: job.endpoint,
    subject: subjectOf(body),
    status: job.status,
    done: job.progress.done,
    total: job.progress.total,
    created: pageTime(job.created_at),
    createdIso: job.created_at,
    finished: pageTime(job.finished_at),
    error: job.error?.message ?? null,
    webhook: job.webhook_url,
    deliveries: job.webhook_deliveries?.length ?? 0,
    cancellable: job.status === 'queued' || job.status === 'running',
  };
}

const STATUS_FILTER = new Set<string>(JOB_STATUSES);

/** The account's jobs: status and progress of each, newest first, with Cancel for those not finished. */
export async function jobPages(app: FastifyInstance, deps: PageDeps): Promise<void> {
  const jobs = deps.jobs;
  if (!jobs) return;

  const list = async (request: FastifyRequest, reply: FastifyReply, notice?: { kind: 'ok' | 'error'; text: string }) => {
    const query = request.query as { status?: unknown; cursor?: unknown };
    const status = typeof query.status === 'string' && STATUS_FILTER.has(query.status) ? (query.status as JobStatus) : undefined;
    const cursor = typeof query.cursor === 'string' ? query.cursor : undefined;
    let page;
    try {
      page = await jobs.list(request.viewer!.account.id, { status, limit: JOBS_PAGE_SIZE, cursor, resultItems: 0, bodies: true });
    } catch (err) {
      // A cursor that is not one of ours (the service bounds and checks it): the first page.
      // Anything else (the database away) is the pages' error handler's.
      if (!(err instanceof ValidationError)) throw err;
      page = await jobs.list(request.viewer!.account.id, { status, limit: JOBS_PAGE_SIZE, resultItems: 0, bodies: true });
    }
    const next = page.next_cursor === null ? null : `/jobs?${new URLSearchParams({ ...(status ? { status } : {}), cursor: page.next_cursor })}`;
    return render(request, reply, 'jobs.eta', {
      title: 'Jobs',
      nav: 'jobs',
      styles: ['jobs.css'],
      rows: page.jobs.map((job, i) => rowOf(job, page.bodies?.[i])),
      statuses: JOB_STATUSES,
      status: status ?? '',
      next,
      ...(notice ? { notice } : {}),
    });
  };

  app.get('/jobs', async (request, reply) => list(request, reply));

  app.post('/jobs/:id/cancel', { preHandler: app.csrfProtection }, async (request, reply) => {
    const { id } = request.params as { id: string };
    // The service treats an id of another account, or a malformed one, as unknown (no query).
    const outcome = await jobs.cancel(request.viewer!.account.id, id);
    if (outcome === undefined) {
      reply.code(404);
      return render(request, reply, 'error.eta', { title: 'No such job', status: 404, message: 'This account has no job with that id; it may have been removed after its time to live.' });
    }
    if (outcome === 'finished') {
      reply.code(409);
      return list(request, reply, { kind: 'error', text: `The job ${id} has finished already and can no longer be cancelled.` });
    }
    return reply.redirect(`/jobs?cancelled=${encodeURIComponent(id)}`, 303);
  });
}
