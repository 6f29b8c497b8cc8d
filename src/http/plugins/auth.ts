import type { FastifyInstance, FastifyRequest } from 'fastify';
import type { AccountService } from '../../domain/accounts/service.js';
import type { Account } from '../../infra/store/store.js';

declare module 'fastify' {
  interface FastifyRequest {
    /** The authenticated account; null on public routes and before authentication. */
    account: Account | null;
    tokenId: number | null;
  }
  interface FastifyContextConfig {
    /** Routes under /api that need no token (the OpenAPI document and its reference). */
    public?: boolean;
  }
}

export const API_PREFIX = '/api';

export function isApiRequest(request: FastifyRequest): boolean {
  return request.url === API_PREFIX || request.url.startsWith(`${API_PREFIX}/`) || request.url.startsWith(`${API_PREFIX}?`);
}

/**
 * Every /api route demands `Authorization: Bearer <token>`, unknown /api paths too, so that
 * a caller without a token learns nothing about which paths exist.
 */
export function registerAuth(app: FastifyInstance, accounts: AccountService): void {
  app.decorateRequest('account', null);
  app.decorateRequest('tokenId', null);
  app.addHook('onRequest', async (request) => {
    if (!isApiRequest(request) || request.routeOptions.config.public) return;
    const { account, tokenId } = await accounts.authenticate(request.headers.authorization);
    request.account = account;
    request.tokenId = tokenId;
  });
}
