import swagger from '@fastify/swagger';
import swaggerUi from '@fastify/swagger-ui';
import type { FastifyInstance } from 'fastify';
import { API_PREFIX } from './plugins/auth.js';

export const API_VERSION = '1.0';

export interface OpenApiInfoExtras {
  /** Lines shown in the document's description: data sources, build dates, attribution. */
  dataNotes?: string[];
}

/** The OpenAPI 3.1 document is built from the routes' TypeBox schemas, so it cannot drift. */
export async function registerOpenApi(app: FastifyInstance, extras: OpenApiInfoExtras = {}): Promise<void> {
  const notes = extras.dataNotes?.length ? `\n\n## Data\n\n${extras.dataNotes.map((n) => `- ${n}`).join('\n')}` : '';
  await app.register(swagger, {
    openapi: {
      openapi: '3.1.0',
      info: {
        title: 'netdiag',
        version: API_VERSION,
        description:
          'Network diagnostics API: proxy checks, IP lookup, DNS and WHOIS, TCP port scans, IPv6 tools and usage analytics. ' +
          'Every /api endpoint needs `Authorization: Bearer <token>`.' +
          notes,
      },
      servers: [{ url: '/' }],
      components: { securitySchemes: { bearer: { type: 'http', scheme: 'bearer' } } },
      security: [{ bearer: [] }],
    },
    refResolver: { buildLocalReference: (json, _base, _fragment, i) => String(json.$id ?? `def-${i}`) },
  });
  // The interactive reference is public like the document it renders.
  app.addHook('onRoute', (route) => {
    if (route.url.startsWith(`${API_PREFIX}/docs`)) route.config = { ...route.config, public: true };
  });
  await app.register(swaggerUi, { routePrefix: `${API_PREFIX}/docs`, uiConfig: { docExpansion: 'list' }, staticCSP: true });
  app.get(`${API_PREFIX}/openapi.json`, { config: { public: true }, schema: { hide: true } }, async () => app.swagger());
}
