import { PORT_443, portExample as port } from '../port-scan/examples.js';
import { ok, one, type OperationExamples } from '../shared/examples.js';

export const portScanCommonExamples: OperationExamples = {
  body: one('the web preset', { host: 'example.com', preset: 'web', timeout: 3 }),
  ok: ok([port(80, 'http', 'open', 22.9), PORT_443, port(8080, 'http-alt', 'closed', 21.4)], '2 of 3 ports open'),
  invalid: { field: 'preset', message: 'preset: must be one of top100, web, mail, database' },
};
