import type { FastifyInstance } from 'fastify';

/** The path of a request URL, without its query string. */
export function pathOf(url: string): string {
  const q = url.indexOf('?');
  return q === -1 ? url : url.slice(0, q);
}

/**
 * Which paths exist, with which methods, and which are public: learnt once as routes are added.
 * Our /api routes have no parameters, so a path lookup answers on the hot path what
 * `request.routeOptions` would (a getter that builds a fresh object on every access).
 */
export class RouteIndex {
  readonly #methods = new Map<string, Set<string>>();
  readonly #public = new Set<string>();

  constructor(app: FastifyInstance) {
    app.addHook('onRoute', (route) => {
      const set = this.#methods.get(route.url) ?? new Set<string>();
      for (const m of Array.isArray(route.method) ? route.method : [route.method]) set.add(m);
      this.#methods.set(route.url, set);
      if (route.config?.public) this.#public.add(route.url);
    });
  }

  /** The methods a path takes, HEAD aside; undefined for an unknown path. */
  methodsOf(path: string): string[] | undefined {
    const set = this.#methods.get(path);
    return set && [...set].filter((m) => m !== 'HEAD').sort();
  }

  matches(method: string, path: string): boolean {
    return this.#methods.get(path)?.has(method) ?? false;
  }

  isPublic(path: string): boolean {
    return this.#public.has(path);
  }
}
