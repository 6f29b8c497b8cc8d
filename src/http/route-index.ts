import type { FastifyInstance } from 'fastify';

/** The path of a request URL, without its query string. */
export function pathOf(url: string): string {
  const q = url.indexOf('?');
  return q === -1 ? url : url.slice(0, q);
}

/**
 * Which paths exist, with which methods: learnt once as routes are added, so that a request
 * that matched no route can be told 405 (the path exists) rather than 404.
 */
export class RouteIndex {
  readonly #methods = new Map<string, Set<string>>();

  constructor(app: FastifyInstance) {
    app.addHook('onRoute', (route) => {
      const set = this.#methods.get(route.url) ?? new Set<string>();
      for (const m of Array.isArray(route.method) ? route.method : [route.method]) set.add(m);
      this.#methods.set(route.url, set);
    });
  }

  /**
   * The methods a path takes, sorted; undefined for an unknown path. HEAD is among them wherever
   * GET is: Fastify answers it for every GET route (`exposeHeadRoutes`), and Allow lists it.
   */
  methodsOf(path: string): string[] | undefined {
    const set = this.#methods.get(path);
    return set && [...set].sort();
  }
}
