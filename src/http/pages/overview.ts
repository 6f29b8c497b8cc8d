import type { FastifyInstance } from 'fastify';
import type { PageDeps } from './deps.js';

export async function overviewPages(_app: FastifyInstance, _deps: PageDeps): Promise<void> {}
