import { PORT_443, portExample as port } from '../port-scan/examples.js';
import { ok, type OperationExamples } from '../shared/examples.js';

export const portScanRangeExamples: OperationExamples = {
  body: {
    few: { summary: 'a few ports', value: { host: 'example.com', ports: [22, 80, 443], timeout: 3 } },
    all: { summary: 'every port: as a job only (Prefer: respond-async)', value: { host: 'example.com', ports: '1-65535', timeout: 1 } },
  },
  ok: ok([port(22, 'ssh', 'filtered', 3000), port(80, 'http', 'open', 22.9), PORT_443], '2 of 3 ports open'),
  invalid: { field: 'ports', message: 'ports: at most 1000 ports, "1-65535" expands to 65535; a job (Prefer: respond-async) takes up to 65535' },
};
