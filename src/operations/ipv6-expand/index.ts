import { expand } from '../../domain/ipv6/index.js';
import { defineOperation } from '../operation.js';
import { ipv6View } from '../ipv6-validate/view.js';
import { ipv6ExpandExamples } from './examples.js';
import { Ipv6Body, Ipv6Expansion } from './schema.js';

export const ipv6Expand = defineOperation({
  path: '/ipv6/expand',
  summary: 'Expand an IPv6 address to full notation',
  tags: ['ipv6'],
  body: Ipv6Body,
  data: Ipv6Expansion,
  probe: false,
  precheck(_deps, { ipv6 }) {
    expand(ipv6);
  },
  async run(_deps, { ipv6 }) {
    return { data: expand(ipv6), message: 'address expanded' };
  },
  examples: ipv6ExpandExamples,
  view: ipv6View,
});
