// ESLint (flat config): the recommended rules of ESLint and typescript-eslint, without type
// information (type-aware linting would make `npm test` slow), plus the layering of STYLE.md.
import js from '@eslint/js';
import tseslint from 'typescript-eslint';

const NODE_IO = ['net', 'dns', 'dgram', 'fs', 'fs/promises', 'http', 'https', 'http2', 'tls', 'child_process', 'worker_threads', 'cluster'];

export default tseslint.config(
  { ignores: ['**/node_modules/', '**/dist/', 'data/', 'bench/results/', 'test-output/', '.test-build/'] },
  js.configs.recommended,
  tseslint.configs.recommended,
  {
    languageOptions: {
      globals: {
        console: 'readonly', process: 'readonly', Buffer: 'readonly', URL: 'readonly', URLSearchParams: 'readonly',
        setTimeout: 'readonly', clearTimeout: 'readonly', setInterval: 'readonly', clearInterval: 'readonly',
        setImmediate: 'readonly', clearImmediate: 'readonly', queueMicrotask: 'readonly', structuredClone: 'readonly',
        AbortController: 'readonly', AbortSignal: 'readonly', TextEncoder: 'readonly', TextDecoder: 'readonly',
        fetch: 'readonly', performance: 'readonly',
      },
    },
  },
  {
    rules: {
      // A leading underscore marks what is unused on purpose: a parameter a signature requires,
      // a property left out of a rest spread (`{ secret: _secret, ...shown }`).
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_', caughtErrorsIgnorePattern: '^_', destructuredArrayIgnorePattern: '^_' }],
      // Hostile-input checks match control characters on purpose (names, proxy lines, mmdb text).
      'no-control-regex': 'off',
    },
  },
  {
    // Tests read JSON answers and databases of older schemas (Kysely<any>) without declaring their shape.
    files: ['test/**/*.ts'],
    rules: { '@typescript-eslint/no-explicit-any': 'off' },
  },
  {
    // The dashboard's script runs in the browser.
    files: ['src/http/pages/assets/**/*.js'],
    languageOptions: { globals: { document: 'readonly', window: 'readonly', navigator: 'readonly' } },
  },
  {
    // The domain knows nothing of the infrastructure, of HTTP or of the configuration (STYLE.md,
    // "The shape of the house"; docs/architecture.md, "Which way imports point").
    files: ['src/domain/**/*.ts'],
    rules: {
      'no-restricted-imports': ['error', {
        patterns: [
          { group: ['**/infra/**', '**/infra'], message: 'src/domain declares the interfaces it needs; src/infra implements them.' },
          { group: ['**/http/**', '**/http'], message: 'src/domain knows nothing of HTTP.' },
          { group: ['fastify', 'fastify/**', '@fastify/**'], message: 'Only src/http imports Fastify.' },
          { group: ['**/config', '**/config.js'], message: 'src/config.ts imports the domain, not the reverse: the domain is given its settings.' },
        ],
      }],
    },
  },
  {
    // The operations declare the endpoints over the domain; src/http builds the routes from them,
    // and src/compose.ts hands in the infrastructure (docs/architecture.md).
    files: ['src/operations/**/*.ts'],
    rules: {
      'no-restricted-imports': ['error', {
        patterns: [
          { group: ['**/infra/**', '**/infra'], message: 'src/operations takes the domain\'s interfaces; src/compose.ts hands in their implementations.' },
          { group: ['**/http/**', '**/http'], message: 'src/operations knows nothing of HTTP: src/http builds the routes from it.' },
          { group: ['fastify', 'fastify/**', '@fastify/**'], message: 'Only src/http imports Fastify.' },
        ],
      }],
    },
  },
  {
    // HTTP is given what src/infra builds (src/compose.ts); it may name its types.
    files: ['src/http/**/*.ts'],
    rules: {
      '@typescript-eslint/no-restricted-imports': ['error', {
        patterns: [{ group: ['**/infra/**', '**/infra'], allowTypeImports: true, message: 'src/http loads nothing of src/infra: src/compose.ts builds it and hands it in (import type is fine).' }],
      }],
    },
  },
  {
    // What `netdiag worker` loads: no server, no app, no HTTP (test/architecture.test.ts follows
    // the imports further; the worker imports its metrics listener with import() when asked).
    files: ['src/worker.ts', 'src/compose.ts', 'src/runtime.ts'],
    rules: {
      '@typescript-eslint/no-restricted-imports': ['error', {
        paths: ['./server.js', './app.js'].map((name) => ({ name, allowTypeImports: true, message: 'netdiag worker loads neither the server nor the app (import type is fine).' })),
        patterns: [{ group: ['./http/**'], allowTypeImports: true, message: 'netdiag worker loads no HTTP code but its metrics listener, through import() (import type is fine).' }],
      }],
    },
  },
  {
    // Pure address code: no I/O, no layer above it.
    files: ['src/net/**/*.ts'],
    rules: {
      'no-restricted-imports': ['error', {
        paths: NODE_IO.flatMap((m) => [m, `node:${m}`]).map((name) => ({ name, message: 'src/net does no I/O.' })),
        patterns: [{ group: ['**/infra/**', '**/domain/**', '**/http/**'], message: 'src/net depends on no layer.' }],
      }],
    },
  },
);
