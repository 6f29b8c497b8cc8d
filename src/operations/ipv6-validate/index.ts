import { validate } from '../../domain/ipv6/index.js';
import { defineOperation } from '../operation.js';
import { ipv6ValidateExamples } from './examples.js';
import { Ipv6ValidateBody, Ipv6Validation } from './schema.js';
import { ipv6View } from './view.js';

export const ipv6Validate = defineOperation({
  path: '/ipv6/validate',
  summary: 'Validate IPv6 address format',
  tags: ['ipv6'],
  body: Ipv6ValidateBody,
  data: Ipv6Validation,
  probe: false,
  async run(_deps, { ipv6 }) {
    const result = validate(ipv6);
    return { data: result, message: result.valid ? 'valid IPv6 address' : 'not a valid IPv6 address' };
  },
  examples: ipv6ValidateExamples,
  view: ipv6View,
});
