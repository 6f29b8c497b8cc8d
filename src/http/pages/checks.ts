import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { stringify } from 'csv-stringify/sync';
import { LRUCache } from 'lru-cache';
import { nextLoopIteration } from '../../domain/jobs/items.js';
import type { JobRecord } from '../../domain/jobs/repository.js';
import type { JobViews } from '../../domain/jobs/views.js';
import { FINISHED_STATUSES, type JobView } from '../../domain/jobs/types.js';
import { WEBHOOK_SCHEDULE_TEXT } from '../../domain/webhooks/delivery.js';
import type { Account } from '../../domain/accounts/repositories.js';
import { ConflictError } from '../../errors.js';
import { OPERATIONS, type AnyOperation } from '../../operations/index.js';
import type { CallOperation } from '../calls.js';
import { NEVER } from '../call-steps.js';
import { pathWords } from '../../operations/names.js';
import { resultBlocks } from '../../operations/shared/view.js';
import { answerDone, jsonPieces, sendPieces } from '../job-reads.js';
import { resumeAfter } from '../job-streams.js';
import { bodyOf, checkToolOf, fieldsFilled, type CheckTool } from './check-forms.js';
import type { PageDeps } from './deps.js';
import { pageTime, refusal, render } from './render.js';

/** A result's JSON shown on its page to copy; a larger one is a download only (a 65535-port scan is megabytes). */
export const INLINE_JSON_MAX_CHARS = 200_000;
/**
 * Items of a result a job's page shows (the first, in input order); the rest are the download's.
 * A 1000-port scan's page is whole; a 65535-port one's built whole was 4.7 MB of HTML (a port
 * grid of 65535 cells) and held the server for a quarter of a second per view.
 */
export const PAGE_RESULT_ITEMS = 1000;
/**
 * CSV rows made in one iteration of the event loop: ten downloads of a full-range scan at once
 * alternate, each piece a few milliseconds, so that other requests wait for no more than ten of them.
 */
export const CSV_PIECE_ROWS = 250;

/** Seconds between reloads of a running job's page where no script runs. */
export const JOB_PAGE_REFRESH_S = 3;

/** The Checks page lists these groups (operations' first tags) first, in this order. */
const GROUP_ORDER = ['proxy', 'ip', 'dns', 'ports', 'path', 'ipv6'];

/**
 * A check of the signed-in account, run as a job: the operation called through its route's
 * steps (src/http/calls.ts: its windows, validation, precheck and target policy, usage under its
 * endpoint) as `POST /api<path>` with `Prefer: respond-async` would be. The job, or the error
 * the API's refusal was made from (its status, message and headers), thrown as it was.
 */
async function startJob(calls: CallOperation, request: FastifyRequest, account: Account, op: AnyOperation, body: Record<string, unknown>): Promise<JobView> {
  const res = await calls({ account, receivedAt: request.receivedAt, signal: NEVER, log: request.log }, op, body, { job: true });
  if (res.error !== undefined) throw res.error;
  return (res.body as { data: JobView }).data;
}

/** CSV cells that a spreadsheet would run as a formula start with one of these (OWASP: CSV injection). */
const FORMULA_START = /^[=+\-@\t\r]/;

function cellOf(v: unknown): string {
  const text = v === null || v === undefined ? '' : typeof v === 'object' ? JSON.stringify(v) : String(v);
  return FORMULA_START.test(text) ? `'${text}` : text;
}

/** An object's fields as flat columns: `location.country`; lists of scalars joined with `; `. */
function flatten(o: unknown, prefix = '', out: Record<string, string> = {}, depth = 0): Record<string, string> {
  if (typeof o !== 'object' || o === null || Array.isArray(o) || depth > 4) {
    out[prefix || 'value'] = Array.isArray(o) && o.every((x) => typeof x !== 'object' || x === null) ? o.map(cellOf).join('; ') : cellOf(o);
    return out;
  }
  for (const [k, v] of Object.entries(o)) flatten(v, prefix ? `${prefix}.${k}` : k, out, depth + 1);
  return out;
}

/** A job's result as CSV: a row per item of a list, or one row for a single result. */
export function resultCsv(result: unknown): string {
  const rows = (Array.isArray(result) ? result : result === null || result === undefined ? [] : [result]).map((r) => flatten(r));
  const columns: string[] = [];
  for (const r of rows) for (const k of Object.keys(r)) if (!columns.includes(k)) columns.push(k);
  return stringify(rows.map((r) => columns.map((c) => r[c] ?? '')), { header: true, columns });
}

/** Finished jobs whose CSV columns are kept, the last downloaded first (a few hundred bytes each). */
export const CSV_COLUMNS_KEPT = 16;

/**
 * The CSV columns of a job whose result is items: every item's fields in the order resultCsv finds
 * them (by the first row that has each, then its place in that row), gathered by a pass over the
 * items in the order they were stored, CSV_PIECE_ROWS items an iteration of the event loop.
 */
async function csvColumns(views: JobViews, row: JobRecord, signal?: AbortSignal): Promise<string[]> {
  const first = new Map<string, [index: number, place: number]>();
  for await (const records of views.itemsBySeq(row, signal)) {
    for (let at = 0; at < records.length; at += CSV_PIECE_ROWS) {
      for (const r of records.slice(at, at + CSV_PIECE_ROWS)) {
        Object.keys(flatten(JSON.parse(r.item))).forEach((column, place) => {
          const known = first.get(column);
          if (known === undefined || r.index < known[0]) first.set(column, [r.index, place]);
        });
      }
      await nextLoopIteration();
    }
  }
  return [...first].sort(([, a], [, b]) => a[0] - b[0] || a[1] - b[1]).map(([column]) => column);
}

/**
 * resultCsv of a job's result, made piece by piece from its stored items: the columns first
 * (csvColumns; `columns` gives them when known), then CSV_PIECE_ROWS rows an iteration of the
 * event loop, in input order.
 */
export async function* resultCsvPieces(
  views: JobViews,
  row: JobRecord,
  signal?: AbortSignal,
  columns: (views: JobViews, row: JobRecord, signal?: AbortSignal) => Promise<string[]> = csvColumns,
): AsyncGenerator<string> {
  const items = views.resultItems(row, signal);
  if (items === null) {
    yield resultCsv(JSON.parse(await views.resultText(row)) as unknown);
    return;
  }
  const names = await columns(views, row, signal);
  let header = true;
  for await (const texts of items) {
    for (let at = 0; at < texts.length; at += CSV_PIECE_ROWS) {
      const rows = texts.slice(at, at + CSV_PIECE_ROWS).map((t) => flatten(JSON.parse(t)));
      yield stringify(rows.map((r) => names.map((c) => r[c] ?? '')), { header, columns: names });
      header = false;
      await nextLoopIteration();
    }
  }
  if (header) yield resultCsv([]);
}

/**
 * csvColumns, kept for finished jobs (their items no longer change): ten downloads of one
 * full-range result at once make one pass over its items for the columns, not ten.
 */
function keptCsvColumns(): (views: JobViews, row: JobRecord, signal?: AbortSignal) => Promise<string[]> {
  const kept = new LRUCache<string, { version: string; columns: Promise<string[]> }>({ max: CSV_COLUMNS_KEPT });
  return (views, row, signal) => {
    if (!FINISHED_STATUSES.has(row.status)) return csvColumns(views, row, signal);
    const version = `${row.attempts} ${row.finished_at}`;
    const known = kept.get(row.id);
    if (known && known.version === version) return known.columns;
    // Shared: one download's going away does not stop it for the others.
    const columns = csvColumns(views, row);
    columns.catch(() => {
      if (kept.peek(row.id)?.columns === columns) kept.delete(row.id);
    });
    kept.set(row.id, { version, columns });
    return columns;
  };
}

/** The Checks section and every job's own page. */
export async function checkPages(app: FastifyInstance, deps: PageDeps): Promise<void> {
  const jobs = deps.jobs;
  const calls = deps.calls;
  if (!jobs || !calls) return;
  const byPath = new Map(OPERATIONS.map((op) => [op.path, op]));
  const columnsOf = keptCsvColumns();
  const tools = OPERATIONS.map(checkToolOf);
  const bySlug = new Map(tools.map((t) => [t.slug, t]));
  const slugOf = (endpoint: string) => pathWords(endpoint).join('-');
  // The order; groups of operations declared later follow, in their declaration order.
  const order = (g: string) => (GROUP_ORDER.indexOf(g) + GROUP_ORDER.length + 1) % (GROUP_ORDER.length + 1);
  const groups = [...new Set(tools.map((t) => t.group))]
    .sort((a, b) => order(a) - order(b))
    .map((group) => ({ group, tools: tools.filter((t) => t.group === group) }));

  const form = (request: FastifyRequest, reply: FastifyReply, tool: CheckTool, values: Record<string, unknown> = {}, notice?: { kind: 'ok' | 'error'; text: string }) =>
    render(request, reply, 'check.eta', {
      title: tool.summary,
      nav: 'checks',
      styles: ['checks.css'],
      tool,
      fields: fieldsFilled(tool, values),
      ...(notice ? { notice } : {}),
    });

  app.get('/checks', async (request, reply) => render(request, reply, 'checks.eta', { title: 'Checks', nav: 'checks', styles: ['checks.css'], groups }));

  app.get('/checks/:slug', async (request, reply) => {
    const tool = bySlug.get((request.params as { slug: string }).slug);
    if (!tool) return notFound(request, reply, 'There is no check by that name.');
    // "Run again, changed": the form filled with a job's own input.
    const from = (request.query as { from?: unknown }).from;
    if (typeof from === 'string') {
      const row = await jobs.find(request.viewer!.account.id, from);
      if (row && row.endpoint === tool.path) return form(request, reply, tool, { ...(JSON.parse(row.body) as Record<string, unknown>), webhook_url: row.webhook_url ?? undefined });
    }
    return form(request, reply, tool);
  });

  app.post('/checks/:slug', { preHandler: app.csrfProtection }, async (request, reply) => {
    const tool = bySlug.get((request.params as { slug: string }).slug);
    if (!tool) return notFound(request, reply, 'There is no check by that name.');
    const sent = (request.body ?? {}) as Record<string, unknown>;
    try {
      const job = await startJob(calls, request, request.viewer!.account, byPath.get(tool.path)!, bodyOf(tool, sent));
      return reply.redirect(`/jobs/${job.id}`, 303);
    } catch (err) {
      return form(request, reply, tool, sent, { kind: 'error', text: refusal(reply, err) });
    }
  });

  const notFound = (request: FastifyRequest, reply: FastifyReply, message: string) => {
    reply.code(404);
    return render(request, reply, 'error.eta', { title: 'Not found', status: 404, message });
  };
  const noJob = (request: FastifyRequest, reply: FastifyReply) =>
    notFound(request, reply, 'This account has no job with that id; it may have been removed after its time to live.');

  const jobPage = async (request: FastifyRequest, reply: FastifyReply, notice?: { kind: 'ok' | 'error'; text: string }) => {
    const { id } = request.params as { id: string };
    const row = await jobs.find(request.viewer!.account.id, id);
    if (!row) return noJob(request, reply);
    // A bounded part of a big result: the page is read by a person, the whole is the download's.
    const { view, shown, total } = await jobs.views.viewPart(row, PAGE_RESULT_ITEMS);
    const finished = FINISHED_STATUSES.has(view.status);
    const partial = shown < total;
    const json = partial ? '' : (JSON.stringify(view.result, null, 2) ?? 'null');
    const query = request.query as { sent?: unknown };
    const tool = bySlug.get(slugOf(view.endpoint));
    // The view its operation declares (src/operations/<tool>/view.ts), or the generic one.
    const resultView = byPath.get(view.endpoint)?.view;
    return render(request, reply, 'job.eta', {
      title: `Job ${view.id}`,
      nav: 'jobs',
      styles: ['jobs.css', 'checks.css'],
      job: view,
      tool: tool ?? null,
      finished,
      refresh: finished ? null : JOB_PAGE_REFRESH_S,
      times: { created: pageTime(view.created_at), started: pageTime(view.started_at), finished: pageTime(view.finished_at) },
      blocks: resultBlocks(resultView, view.result, deps.now(), partial ? total : undefined),
      partial: partial ? { shown: shown.toLocaleString('en-US'), total: total.toLocaleString('en-US'), what: resultView?.items ?? 'items' } : null,
      json: !partial && json.length <= INLINE_JSON_MAX_CHARS ? json : null,
      attempts: (view.webhook_deliveries ?? []).map((a) => ({ ...a, when: pageTime(a.at) })),
      // The rule the attempts follow, from the constants the delivery runs on.
      schedule: WEBHOOK_SCHEDULE_TEXT.replaceAll('`', ''),
      ...(notice ? { notice } : query.sent === '1' ? { notice: { kind: 'ok' as const, text: 'The webhook is being sent again; its attempt shows below once made.' } } : {}),
    });
  };

  app.get('/jobs/:id', async (request, reply) => jobPage(request, reply));

  // Live progress: the job's items and its finish as Server-Sent Events, from the API's own streams.
  app.get('/jobs/:id/events', async (request, reply) => {
    const { id } = request.params as { id: string };
    const account = request.viewer!.account;
    const job = deps.streams && (await jobs.find(account.id, id));
    if (!deps.streams || !job) return noJob(request, reply);
    // Where the page left off (the items it was rendered with), or where a reconnecting EventSource did.
    const lastEventId = request.headers['last-event-id'];
    const after = typeof lastEventId === 'string' ? lastEventId : (request.query as { after?: unknown }).after;
    return deps.streams.open(reply, account.id, job, resumeAfter(typeof after === 'string' ? after : undefined), 'sse');
  });

  // The downloads are written from the stored items piece by piece (src/http/job-reads.ts).
  app.get('/jobs/:id/json', async (request, reply) => {
    const { id } = request.params as { id: string };
    const row = await jobs.find(request.viewer!.account.id, id);
    if (!row) return noJob(request, reply);
    const text = await jobs.viewText(row, answerDone(reply));
    return sendPieces(reply.type('application/json; charset=utf-8').header('content-disposition', `attachment; filename="${row.id}.json"`), jsonPieces(text));
  });

  app.get('/jobs/:id/csv', async (request, reply) => {
    const { id } = request.params as { id: string };
    const row = await jobs.find(request.viewer!.account.id, id);
    if (!row) return noJob(request, reply);
    return sendPieces(reply.type('text/csv; charset=utf-8').header('content-disposition', `attachment; filename="${row.id}.csv"`), resultCsvPieces(jobs.views, row, answerDone(reply), columnsOf));
  });

  app.post('/jobs/:id/run-again', { preHandler: app.csrfProtection }, async (request, reply) => {
    const { id } = request.params as { id: string };
    const account = request.viewer!.account;
    const row = await jobs.find(account.id, id);
    const op = row && byPath.get(row.endpoint);
    if (!row || !op) return noJob(request, reply);
    try {
      const body = { ...(JSON.parse(row.body) as Record<string, unknown>), ...(row.webhook_url ? { webhook_url: row.webhook_url } : {}) };
      const job = await startJob(calls, request, account, op, body);
      return reply.redirect(`/jobs/${job.id}`, 303);
    } catch (err) {
      return jobPage(request, reply, { kind: 'error', text: refusal(reply, err) });
    }
  });

  // The same domain call as POST /api/jobs/{id}/deliveries.
  app.post('/jobs/:id/deliveries', { preHandler: app.csrfProtection }, async (request, reply) => {
    const { id } = request.params as { id: string };
    const account = request.viewer!.account;
    const view = await jobs.get(account.id, id);
    if (!view) return noJob(request, reply);
    try {
      if (!deps.jobWebhooks) throw new ConflictError('this server sends no webhooks');
      await deps.jobWebhooks.redeliver(view, account.id);
      return reply.redirect(`/jobs/${view.id}?sent=1`, 303);
    } catch (err) {
      return jobPage(request, reply, { kind: 'error', text: refusal(reply, err) });
    }
  });
}
