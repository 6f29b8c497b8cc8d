import type { FastifyInstance } from 'fastify';
import type { PageDeps } from './deps.js';

export async function tokenPages(_app: FastifyInstance, _deps: PageDeps): Promise<void> {}
