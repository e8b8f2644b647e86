// ESLint: type-aware rules from typescript-eslint; formatting is Prettier's job.
import js from '@eslint/js';
import globals from 'globals';
import tseslint from 'typescript-eslint';

/** `x as unknown as T`: a cast that silences the type checker instead of informing it. */
const DOUBLE_CAST =
  "TSAsExpression[expression.type='TSAsExpression'][expression.typeAnnotation.type='TSUnknownKeyword']";

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
    ],
  },
  js.configs.recommended,
  ...tseslint.configs.recommendedTypeChecked,
  {
    languageOptions: {
      parserOptions: {
        projectService: { allowDefaultProject: ['*.js', 'servers/*.mjs'] },
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
    files: ['machines/**/*.ts'],
    rules: {
      'no-restricted-syntax': [
        'error',
        { selector: DOUBLE_CAST, message: 'Type the event or the action params instead of `as unknown as`.' },
      ],
    },
  },
);
