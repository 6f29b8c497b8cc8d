import type { FastifyInstance } from 'fastify';
import { Type, type Static } from 'typebox';
import { USAGE_DAYS_DEFAULT } from '../../domain/usage/service.js';
import { exportCsv, exportFileName, exportMessage } from '../../domain/usage/export.js';
import { ok } from '../reply.js';
import { envelope, responses } from '../schemas/common.js';
import { ExportQuery, ExportRow, HistoryDay, HistoryQuery, UsageStats } from '../schemas/usage.js';
import { accountOf } from '../plugins/auth.js';
import type { RouteDeps } from './deps.js';

export async function usageRoutes(app: FastifyInstance, deps: RouteDeps): Promise<void> {
  app.get(
    '/usage/stats',
    { schema: { operationId: 'usageStats', summary: 'Current usage and limits', tags: ['usage'], response: responses(UsageStats) } },
    async (request) => {
      const account = accountOf(request);
      const windows = request.rateDecision?.windows ?? [];
      const stats = await deps.usage.stats(account, windows, request.receivedAt, '/usage/stats');
      return ok(stats, 'usage statistics');
    },
  );

  app.get(
    '/usage/history',
    {
      schema: {
        operationId: 'usageHistory',
        summary: 'Requests per UTC day, oldest first, days without traffic included',
        tags: ['usage'],
        querystring: HistoryQuery,
        response: responses(Type.Array(HistoryDay)),
      },
    },
    async (request) => {
      const { days = USAGE_DAYS_DEFAULT } = request.query as Static<typeof HistoryQuery>;
      return ok(await deps.usage.history(accountOf(request).id, days, request.receivedAt), `usage of the last ${days} days`);
    },
  );

  app.get(
    '/usage/export',
    {
      schema: {
        operationId: 'usageExport',
        summary: 'Usage per day and endpoint, as JSON or CSV',
        tags: ['usage'],
        querystring: ExportQuery,
        response: {
          200: {
            description: 'JSON in the envelope (`format=json`), or CSV with a header row as an attachment (`format=csv`)',
            headers: {
              'Content-Disposition': Type.String({ description: 'with format=csv: `attachment; filename="netdiag-usage-YYYY-MM-DD.csv"`' }),
            },
            content: {
              'application/json': { schema: envelope(Type.Array(ExportRow)) },
              'text/csv': { schema: Type.String() },
            },
          },
        },
      },
    },
    async (request, reply) => {
      const { days = USAGE_DAYS_DEFAULT, format = 'json' } = request.query as Static<typeof ExportQuery>;
      const rows = await deps.usage.exportRows(accountOf(request).id, days, request.receivedAt);
      if (format === 'csv') {
        return reply
          .type('text/csv; charset=utf-8')
          .header('content-disposition', `attachment; filename="${exportFileName(request.receivedAt)}"`)
          .send(exportCsv(rows));
      }
      return ok(rows, exportMessage(days));
    },
  );
}
