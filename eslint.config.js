// ESLint: type-aware rules from typescript-eslint; formatting is Prettier's job.
import js from '@eslint/js';
import boundaries from 'eslint-plugin-boundaries';
import globals from 'globals';
import tseslint from 'typescript-eslint';

/** `x as unknown as T`: a cast that silences the type checker instead of informing it. */
const DOUBLE_CAST =
  "TSAsExpression[expression.type='TSAsExpression'][expression.typeAnnotation.type='TSUnknownKeyword']";

/**
 * The layers of src/, lowest first (docs/architecture.md, "Layers"). A file may import its own
 * layer, any layer below it and machines/; rooms on one level (protocol and auth; catalog and
 * tasks; adapters and cli) do not import each other. A folder added to src/ must be placed here.
 * @type {Array<Record<string, string>>}
 */
const LAYERS = [
  { core: 'src/core' },
  { store: 'src/store' },
  { protocol: 'src/protocol', auth: 'src/auth' },
  { config: 'src/config' },
  { transports: 'src/transports' },
  { observe: 'src/observe' },
  { runtime: 'src/runtime' },
  { catalog: 'src/catalog', tasks: 'src/tasks', events: 'src/events' },
  { tools: 'src/tools', dashboard: 'src/dashboard' },
  { handle: 'src/handle' }, // one server's facade: the handle, its status, settings and handshake facts
  { supervisor: 'src/supervisor' }, // the servers' actors under their policy, the supervisor and its events
  { face: 'src' }, // the files in src/ itself: index and connect
  { gateway: 'src/gateway' }, // one MCP server in front of all: the face and the catalog, served (the CLI's `serve`)
  { adapters: 'src/adapters', cli: 'src/cli' },
];

// Descriptors match in order: the named folders first, then any other folder of src/ as
// 'unlayered' (no policy lets it import or be imported), and last the files of src/ itself.
const layerElements = [
  ...LAYERS.flatMap((level) => Object.entries(level))
    .filter(([type]) => type !== 'face')
    .map(([type, pattern]) => ({ type, pattern, partialMatch: false })),
  { type: 'machines', pattern: 'machines', partialMatch: false },
  { type: 'unlayered', pattern: 'src/*', partialMatch: false },
  { type: 'face', pattern: 'src', partialMatch: false },
];

const layerPolicies = [
  ...LAYERS.flatMap((level, index) => {
    const below = LAYERS.slice(0, index).flatMap((lower) => Object.keys(lower));
    return Object.keys(level).map((type) => ({
      from: { element: { type } },
      allow: { to: { element: { type: [type, ...below, 'machines'] } } },
    }));
  }),
  { from: { element: { type: 'machines' } }, allow: { to: { element: { type: 'machines' } } } },
];

export default tseslint.config(
  {
    ignores: [
      'dist/',
      '.bench-build/',
      'coverage/',
      'node_modules/',
      '.conformance/',
      '.package-test/',
      '.package-test-adapters/',
      '.tmp/',
      '.docs-run/',
      '.docs-check/',
    ],
  },
  js.configs.recommended,
  ...tseslint.configs.recommendedTypeChecked,
  {
    languageOptions: {
      parserOptions: {
        projectService: { allowDefaultProject: ['*.js', 'servers/*.mjs', 'scripts/*.mjs'] },
        tsconfigRootDir: import.meta.dirname,
      },
    },
    rules: {
      '@typescript-eslint/no-floating-promises': 'error',
      '@typescript-eslint/no-misused-promises': 'error',
      '@typescript-eslint/no-unused-vars': [
        'error',
        { argsIgnorePattern: '^_', varsIgnorePattern: '^_', caughtErrors: 'none' },
      ],
      '@typescript-eslint/no-explicit-any': 'error',
      '@typescript-eslint/consistent-type-imports': ['error', { fixStyle: 'inline-type-imports' }],
      // Async methods that implement promise-returning interfaces keep a throw a rejection.
      '@typescript-eslint/require-await': 'off',
    },
  },
  {
    // Tests, test servers and benchmarks read JSON off the wire and poke at it freely; the typed
    // contract they check is the library's, which keeps every rule above.
    files: ['test/**', 'servers/**', 'bench/**', 'scripts/**'],
    rules: {
      '@typescript-eslint/no-explicit-any': 'off',
      '@typescript-eslint/no-unsafe-member-access': 'off',
      '@typescript-eslint/no-unsafe-assignment': 'off',
      '@typescript-eslint/no-unsafe-argument': 'off',
      '@typescript-eslint/no-unsafe-return': 'off',
      '@typescript-eslint/no-unsafe-call': 'off',
    },
  },
  { files: ['**/*.mjs', '*.js'], languageOptions: { globals: globals.node } },
  {
    // The one-way layering, checked on every import (type imports too).
    files: ['src/**/*.ts', 'machines/**/*.ts'],
    plugins: { boundaries },
    settings: {
      'import/resolver': { typescript: { project: 'tsconfig.json' } },
      'boundaries/elements': layerElements,
      'boundaries/include': ['src/**/*.ts', 'machines/**/*.ts'],
    },
    rules: {
      'boundaries/no-unknown-files': 'error',
      'boundaries/dependencies': ['error', { default: 'disallow', checkUnknownLocals: true, policies: layerPolicies }],
    },
  },
  {
    // machines/ is pure logic: xstate and itself, nothing else (no node:, no undici, no src/).
    files: ['machines/**/*.ts'],
    rules: {
      'boundaries/dependencies': [
        'error',
        {
          default: 'disallow',
          checkAllOrigins: true,
          checkUnknownLocals: true,
          policies: [
            { from: { element: { type: 'machines' } }, allow: { to: { element: { type: 'machines' } } } },
            {
              from: { element: { type: 'machines' } },
              allow: { to: { module: { origin: 'external', source: 'xstate' } } },
            },
          ],
        },
      ],
    },
  },
  {
    files: ['machines/**/*.ts'],
    rules: {
      'no-restricted-syntax': [
        'error',
        { selector: DOUBLE_CAST, message: 'Type the event or the action params instead of `as unknown as`.' },
      ],
    },
  },
);
