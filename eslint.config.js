import tseslint from 'typescript-eslint';

/** A relative import that reaches into one of these top-level folders, from anywhere below it. */
const intoLayer = (...layers) => `^(\\.{1,2}/)+(${layers.join('|')})(/|$)`;

export default tseslint.config(
  { ignores: ['node_modules/', '.data/', 'dist/'] },
  ...tseslint.configs.recommended,
  {
    rules: {
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_' }],
      '@typescript-eslint/no-non-null-assertion': 'off',
    },
  },
  // Dependencies point inward: runtime → adapters → machines (docs/architecture.md).
  {
    files: ['machines/**'],
    rules: {
      'no-restricted-imports': [
        'error',
        {
          patterns: [
            { regex: intoLayer('adapters', 'runtime'), message: 'machines/ is the domain: it reaches adapters and the runtime only through the ports it declares.' },
            { regex: '^(?!\\.|xstate(/|$)|zod(/|$))', message: 'machines/ imports no SDK, driver or Node I/O module: only xstate and zod (effects arrive as injected actors and ports).' },
          ],
        },
      ],
    },
  },
  // The client package is published on its own: it depends on nothing of the repository's.
  {
    files: ['packages/kiosk-client/src/**'],
    rules: {
      'no-restricted-imports': [
        'error',
        {
          patterns: [
            { regex: intoLayer('runtime', 'adapters', 'machines', 'test', 'packages'), message: '@kohami/kiosk-client is published on its own: it imports nothing of the repository outside its folder.' },
            { regex: '^(?!\\.{1,2}/|node:)', message: '@kohami/kiosk-client has no dependency: only its own files and node: modules (src/node.ts).' },
          ],
        },
      ],
    },
  },
  {
    files: ['adapters/**'],
    rules: {
      'no-restricted-imports': [
        'error',
        { patterns: [{ regex: intoLayer('runtime'), message: 'adapters/ implement the ports of machines/; what they need from the runtime is passed in.' }] },
      ],
    },
  },
);
