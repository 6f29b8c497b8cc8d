import swagger from '@fastify/swagger';
import swaggerUi from '@fastify/swagger-ui';
import { readFileSync } from 'node:fs';
import type { FastifyInstance, onSendHookHandler } from 'fastify';
import { GEOIP_ATTRIBUTION } from '../domain/ip/geoip.js';
import { completeDocument, type OpenApiDocument } from './openapi-document.js';
import { API_PREFIX } from './plugins/auth.js';

export const API_VERSION = '1.0';

/**
 * The reference's Content-Security-Policy. @fastify/swagger-ui's own (`staticCSP: true`) ends in
 * `upgrade-insecure-requests`, which makes a browser fetch every asset over https from a host
 * that serves plain HTTP: a white page for anyone not on `localhost`. This one is as strict
 * without it: nothing from another origin, no inline script or style (swagger-ui 6 starts from
 * a `'self'` file, swagger-initializer.js), images from `data:` for the CSS icons.
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

/** The reference's own styles: its bar back to the dashboard, and wrapping at phone widths. */
const DOCS_CSS = readFileSync(new URL('./openapi-docs.css', import.meta.url), 'utf8');

const VIEWPORT = '<meta name="viewport" content="width=device-width, initial-scale=1">';
/** Above swagger-ui: the way back to the dashboard, and the document itself. */
const DOCS_BAR =
  '<header class="netdiag-bar"><a class="brand" href="/">netdiag</a><a href="/">Dashboard</a>' +
  `<span class="where">${DOCS_TITLE}</span><a class="raw" href="${API_PREFIX}/openapi.json">openapi.json</a></header>`;

/**
 * swagger-ui's index page with a viewport (its own has none: a phone shows it zoomed out) and the
 * bar above; its page is a fixed template, so both are put in as it is sent. A template that no
 * longer has the marks is sent as it is (test/http/docs-browser.test.ts would tell).
 */
const completeDocsPage: onSendHookHandler = async (_request, reply, payload) => {
  if (typeof payload !== 'string' || !String(reply.getHeader('content-type')).startsWith('text/html')) return payload;
  return payload.replace(/<meta charset="UTF-8">/i, (m) => `${m}\n      ${VIEWPORT}`).replace(/<body>/i, (m) => `${m}\n      ${DOCS_BAR}`);
};

/**
 * The document's word on the data lookups answer from: the same on every server and every day.
 * What one machine has loaded (which files, built when) changes under a running server (a GeoIP
 * file replaced on disk) and differs between machines, so it is GET /readyz's to say; a document
 * that carried it would go stale, and the one the client is generated from would say "n/a".
 */
const DATA_NOTES = [
  'IP lookups (`location`, `asn`) answer from the data bundled with the server, unless its operator names MaxMind-format files of their own (`NETDIAG_GEOIP_CITY_DB`, `NETDIAG_GEOIP_ASN_DB`), which are read again when they change. `GET /readyz` gives the build date of each database in use.',
  `The bundled data: ${GEOIP_ATTRIBUTION.geolite2}`,
  `${GEOIP_ATTRIBUTION.ipLocationDbAsn} ${GEOIP_ATTRIBUTION.dbIpLink}.`,
];

/** The OpenAPI 3.1 document is built from the routes' TypeBox schemas, so it cannot drift. */
export async function registerOpenApi(app: FastifyInstance): Promise<void> {
  const notes = `\n\n## Data\n\n${DATA_NOTES.map((n) => `- ${n}`).join('\n')}`;
  await app.register(swagger, {
    openapi: {
      openapi: '3.1.0',
      info: {
        title: 'netdiag',
        version: API_VERSION,
        description:
          'Network diagnostics API: proxy checks, IP lookup, DNS and WHOIS, TCP port scans, ping, traceroute and mtr, HTTP and TLS checks, IPv6 tools and usage analytics. ' +
          'Every /api endpoint needs `Authorization: Bearer <token>`.' +
          notes,
      },
      servers: [{ url: '/' }],
      components: { securitySchemes: { bearer: { type: 'http', scheme: 'bearer' } } },
      security: [{ bearer: [] }],
    },
    refResolver: { buildLocalReference: (json, _base, _fragment, i) => String(json.$id ?? `def-${i}`) },
    // What holds for every route of a kind (headers, shared errors, Prefer, webhooks, examples): see openapi-document.ts.
    transformObject: (documentObject) =>
      'openapiObject' in documentObject
        ? (completeDocument(documentObject.openapiObject as OpenApiDocument) as typeof documentObject.openapiObject)
        : documentObject.swaggerObject,
  });
  // The interactive reference is public like the document it renders.
  app.addHook('onRoute', (route) => {
    if (!route.url.startsWith(`${API_PREFIX}/docs`)) return;
    route.config = { ...route.config, public: true };
    // The index page, by each URL swagger-ui serves it at. First of the route's own hooks: it reads
    // the page as text, before the compression (src/http/plugins/compression.ts) makes it bytes.
    if (route.url === `${API_PREFIX}/docs` || route.url === `${API_PREFIX}/docs/` || route.url.endsWith('/static/index.html')) {
      route.onSend = [completeDocsPage, ...(Array.isArray(route.onSend) ? route.onSend : route.onSend ? [route.onSend] : [])];
    }
  });
  await app.register(swaggerUi, {
    routePrefix: `${API_PREFIX}/docs`,
    // BaseLayout: no Swagger top bar, whose "explore" box invites loading other documents and
    // whose logo carries an inline <style> the CSP refuses; the document's own title heads the page.
    uiConfig: { layout: 'BaseLayout', docExpansion: 'list', displayRequestDuration: true },
    theme: { title: DOCS_TITLE, css: [{ filename: 'netdiag.css', content: DOCS_CSS }] },
    staticCSP: DOCS_CSP,
  });
  app.get(`${API_PREFIX}/openapi.json`, { config: { public: true }, schema: { hide: true } }, async () => app.swagger());
}
