import type { FastifyReply, FastifyRequest } from 'fastify';

/** A page's own data; the layout adds who is signed in, the CSRF token for its forms, and the nav. */
export interface PageData {
  title: string;
  /** The nav entry to mark as the current page. */
  nav?: 'overview' | 'tokens' | 'settings' | 'admin' | 'jobs';
  /** A message above the page: what the last form did, or why it did not. */
  notice?: { kind: 'ok' | 'error'; text: string };
  /** Extra stylesheets of this page, file names under /assets/ (e.g. 'overview.css'). */
  styles?: string[];
  [key: string]: unknown;
}

export function render(request: FastifyRequest, reply: FastifyReply, template: string, data: PageData): FastifyReply {
  return reply.type('text/html; charset=utf-8').view(template, {
    ...data,
    viewer: request.viewer ?? null,
    csrf: csrfToken(reply),
    path: request.url,
  });
}

/** A CSRF token for the page's forms; '' on an error page reached before the cookies were read. */
function csrfToken(reply: FastifyReply): string {
  try {
    return reply.generateCsrf();
  } catch {
    return '';
  }
}

/** A form's field as a string ('' when absent or not a string): a form body is hostile input. */
export function field(body: unknown, name: string, max = 1_000): string {
  const value = typeof body === 'object' && body !== null ? (body as Record<string, unknown>)[name] : undefined;
  return typeof value === 'string' ? value.slice(0, max) : '';
}
