import type { Static } from 'typebox';
import type { CheckFlags } from '../../domain/proxy/index.js';
import type { proxyFlags } from './schema.js';

/** What to check, from a body's `check_*` fields (each true when left out): /proxy/check's and /proxy/check-bulk's. */
export function flagsOf(body: { [K in keyof typeof proxyFlags]?: Static<(typeof proxyFlags)[K]> }): CheckFlags {
  return {
    ssl: body.check_ssl ?? true,
    anonymity: body.check_anonymity ?? true,
    speed: body.check_speed ?? true,
    location: body.check_location ?? true,
  };
}
