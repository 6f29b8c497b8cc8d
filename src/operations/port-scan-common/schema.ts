import { Type } from 'typebox';
import { PRESET_NAMES, RANGE_DEFAULT_TIMEOUT_S } from '../../domain/ports/index.js';
import { Host, Timeout } from '../port-scan/schema.js';

export const PortScanCommonBody = Type.Object({
  host: Host,
  preset: Type.Enum([...PRESET_NAMES], { description: 'top100 (nmap -F), web, mail or database; case-insensitive' }),
  timeout: Type.Optional(Timeout(RANGE_DEFAULT_TIMEOUT_S, 'per port')),
});
