import swagger from '@fastify/swagger';
import swaggerUi from '@fastify/swagger-ui';
import type { FastifyInstance } from 'fastify';
import { addExamples, type OpenApiDocument } from './examples.js';
import { API_PREFIX } from './plugins/auth.js';

export const API_VERSION = '1.0';

/**
 * The reference's Content-Security-Policy. @fastify/swagger-ui's own (`staticCSP: true`) ends in
 * `upgrade-insecure-requests`, which makes a browser fetch every asset over https from a host
 * that serves plain HTTP: a white page for anyone not on `localhost`. This one is as strict
 * without it: nothing from another origin, no inline script (swagger-ui 6 starts from a
 * `'self'` file, swagger-initializer.js), images from `data:` for the logo and the CSS icons.
 */
export const DOCS_CSP = [
  "default-src 'self'",
  "base-uri 'self'",
  "connect-src 'self'",
  "font-src 'self' data:",
  "form-action 'self'",
  "frame-ancestors 'self'",
  "img-src 'self' data:",
  "object-src 'none'",
  "script-src 'self'",
  "script-src-attr 'none'",
  "style-src 'self'",
].join('; ');

export const DOCS_TITLE = 'netdiag API reference';

const LOGO = `<svg xmlns="http://www.w3.org/2000/svg" width="200" height="40" viewBox="0 0 200 40">
<circle cx="20" cy="20" r="14" fill="none" stroke="#ffffff" stroke-width="3"/>
<path d="M6 20h28M20 6c-6 8-6 20 0 28M20 6c6 8 6 20 0 28" fill="none" stroke="#ffffff" stroke-width="2"/>
<text x="44" y="28" font-family="sans-serif" font-size="22" font-weight="bold" fill="#ffffff">netdiag API</text>
</svg>`;

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
    // Examples live beside the schemas, not in them: see examples.ts.
    transformObject: (documentObject) =>
      'openapiObject' in documentObject ? addExamples(documentObject.openapiObject as OpenApiDocument) : documentObject.swaggerObject,
  });
  // The interactive reference is public like the document it renders.
  app.addHook('onRoute', (route) => {
    if (route.url.startsWith(`${API_PREFIX}/docs`)) route.config = { ...route.config, public: true };
  });
  await app.register(swaggerUi, {
    routePrefix: `${API_PREFIX}/docs`,
    uiConfig: { docExpansion: 'list', displayRequestDuration: true },
    theme: { title: DOCS_TITLE },
    logo: { type: 'image/svg+xml', content: LOGO },
    staticCSP: DOCS_CSP,
  });
  app.get(`${API_PREFIX}/openapi.json`, { config: { public: true }, schema: { hide: true } }, async () => app.swagger());
}
