import type { FastifyInstance } from 'fastify';
import type { PageDeps } from './deps.js';
import { render } from './render.js';
import { accountKey } from '../../domain/owner.js';
import { ok } from '../reply.js';
import { USAGE_DAYS_DEFAULT, utcTimestamp, type DayCounts } from '../../domain/usage/service.js';
import { currentWindows, dayWarning, needsRecordedCounts, windowLimits } from '../../domain/usage/windows.js';
import { exportCsv, exportFileName, exportMessage, exportOptions } from '../../domain/usage/export.js';
import type { WindowState } from '../../domain/usage/rate-limit.js';

/** Days the overview's chart, table and per-endpoint totals cover. */
export const OVERVIEW_DAYS = USAGE_DAYS_DEFAULT;

const WINDOW_TITLES = { minute: 'This minute', hour: 'This hour', day: 'Today' } as const;

/**
 * A count with thousands separators (1,234), as Intl.NumberFormat('en-US') writes it, at a
 * fraction of its cost: a page has a few hundred. Kept for its figure: BENCHMARKS.md, "Speed
 * tricks", row "fmt()".
 */
export function fmt(n: number): string {
  const text = String(n);
  if (n < 1000 && n > -1000) return text;
  // Groups of three from the right, by slicing: counts are integers (a sign at most in front).
  const sign = text.startsWith('-') ? '-' : '';
  const digits = sign ? text.slice(1) : text;
  let out = digits.slice(0, digits.length % 3 || 3);
  for (let i = out.length; i < digits.length; i += 3) out += `,${digits.slice(i, i + 3)}`;
  return sign + out;
}

/** An instant as the page shows it, and as a <time datetime>. */
function when(at: number): { text: string; iso: string } {
  return { text: `${utcTimestamp(at)} UTC`, iso: new Date(at).toISOString() };
}

// The chart's drawing area, in SVG user units (the SVG scales to its box; CSS sets the size).
const W = 640;
const H = 220;
const LEFT = 72;
const RIGHT = 8;
const TOP = 20;
const BOTTOM = 30;
const PLOT_W = W - LEFT - RIGHT;
const PLOT_H = H - TOP - BOTTOM;

const r2 = (x: number): number => Math.round(x * 100) / 100;

/** The smallest of 1, 2, 2.5, 5 × 10^k at or above `n` (at least 1): a round top for the axis. */
function niceCeil(n: number): number {
  if (n <= 1) return 1;
  const pow = 10 ** Math.floor(Math.log10(n));
  for (const m of [1, 2, 2.5, 5, 10]) if (m * pow >= n) return Math.ceil(m * pow);
  return Math.ceil(n);
}

export interface Bar {
  cls: 'ok' | 'failed' | 'limited';
  x: number;
  y: number;
  width: number;
  height: number;
}

export interface Chart {
  width: number;
  height: number;
  left: number;
  right: number;
  bottom: number;
  bars: Bar[];
  grid: { y: number; label: string }[];
  ticks: { x: number; label: string; anchor: 'middle' | 'end' }[];
  label: string;
}

/**
 * The stacked bars of calls per day (successful at the bottom, then failed, then rate limited),
 * drawn here so the page needs no script; the same figures are in the table below the chart.
 */
export function chartOf(days: readonly DayCounts[]): Chart {
  const slot = PLOT_W / Math.max(1, days.length);
  const barWidth = r2(slot * 0.7);
  const total = (d: DayCounts) => d.successful + d.failed + d.rate_limited;
  const top = niceCeil(Math.max(0, ...days.map(total)));
  const scale = PLOT_H / top;
  const base = TOP + PLOT_H;
  const bars: Bar[] = [];
  days.forEach((d, i) => {
    const x = r2(LEFT + i * slot + (slot - barWidth) / 2);
    let y = base;
    for (const [cls, n] of [['ok', d.successful], ['failed', d.failed], ['limited', d.rate_limited]] as const) {
      if (n <= 0) continue;
      const height = n * scale;
      y -= height;
      bars.push({ cls, x, y: r2(y), width: barWidth, height: r2(height) });
    }
  });
  const grid = [0, 0.5, 1].map((f) => ({ y: r2(base - f * PLOT_H), label: fmt(Math.round(f * top)) }));
  // A date every week, counted back from today so today is always labelled.
  const ticks: Chart['ticks'] = [];
  // Today's label ends at the right edge rather than running past it.
  for (let i = days.length - 1; i >= 0; i -= 7) {
    const last = i === days.length - 1;
    ticks.push({ x: last ? W - RIGHT : r2(LEFT + i * slot + slot / 2), label: days[i]!.date.slice(5), anchor: last ? 'end' : 'middle' });
  }
  const sum = { requests: 0, successful: 0, failed: 0, rate_limited: 0 };
  let busiest: DayCounts | null = null;
  for (const d of days) {
    sum.requests += d.requests;
    sum.successful += d.successful;
    sum.failed += d.failed;
    sum.rate_limited += d.rate_limited;
    if (d.requests > 0 && (busiest === null || d.requests > busiest.requests)) busiest = d;
  }
  const first = days[0]?.date ?? '';
  const last = days[days.length - 1]?.date ?? '';
  const label =
    `Requests per UTC day from ${first} to ${last}: ${fmt(sum.requests)} in all, ${fmt(sum.successful)} successful, ` +
    `${fmt(sum.failed)} failed, ${fmt(sum.rate_limited)} rate limited` +
    (busiest ? `; busiest day ${busiest.date} with ${fmt(busiest.requests)}.` : '.') +
    ' The table below lists every day.';
  return { width: W, height: H, left: LEFT, right: W - RIGHT, bottom: base, bars, grid, ticks, label };
}

function windowCards(windows: readonly WindowState[]) {
  return windows.map((w) => ({
    name: w.window,
    title: WINDOW_TITLES[w.window],
    used: w.used,
    limit: w.limit,
    remaining: w.remaining,
    resets: when(w.resetAt),
  }));
}

/** The overview at `/` and the usage export as a page route (session, not token). */
export async function overviewPages(app: FastifyInstance, deps: PageDeps): Promise<void> {
  app.get('/', async (request, reply) => {
    const account = request.viewer!.account;
    const now = deps.now();
    const limits = windowLimits(account.plan);
    // peek counts nothing: looking at the dashboard is not an API call.
    const [peeked, usage] = await Promise.all([
      deps.limiter ? deps.limiter.peek(accountKey(account.id), limits, now) : null,
      deps.usage.overview(account.id, OVERVIEW_DAYS, now),
    ]);
    const recorded = needsRecordedCounts(peeked) ? await deps.usageRecords.windowCounts(account.id, now) : null;
    const windows = currentWindows(peeked, recorded, limits, now);
    const warning = dayWarning(windows);
    return render(request, reply, 'overview.eta', {
      title: 'Overview',
      nav: 'overview',
      styles: ['overview.css'],
      account: { name: account.name, email: account.email, plan: account.plan },
      windows: windowCards(windows),
      warning: warning && { ...warning, resets: when(warning.resetAt) },
      days: usage.days,
      newestFirst: [...usage.days].reverse(),
      endpoints: usage.endpoints,
      chart: chartOf(usage.days),
      span: OVERVIEW_DAYS,
      fmt,
    });
  });

  // What GET /api/usage/export answers, for the signed-in account, as a link a browser follows.
  app.get('/usage/export', async (request, reply) => {
    const { days, format } = exportOptions(request.query);
    const now = deps.now();
    const rows = await deps.usage.exportRows(request.viewer!.account.id, days, now);
    reply.header('cache-control', 'private, no-store');
    if (format === 'csv') {
      return reply.type('text/csv; charset=utf-8').header('content-disposition', `attachment; filename="${exportFileName(now)}"`).send(exportCsv(rows));
    }
    return reply.type('application/json; charset=utf-8').send(JSON.stringify(ok(rows, exportMessage(days))));
  });
}
