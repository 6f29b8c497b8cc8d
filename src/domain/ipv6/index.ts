export { validate, expand, type Ipv6Validation, type Ipv6Expansion } from './format.js';
export { testConnectivity, type Ipv6Deps, type Ipv6TestResult, type Ipv6TestOptions } from './connectivity.js';
