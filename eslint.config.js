import js from '@eslint/js';
import globals from 'globals';
import tseslint from 'typescript-eslint';

export default tseslint.config(
  { ignores: ['dist/', 'sdk/dist/', 'console/dist/', 'node_modules/', 'bench/results/', 'bench/tmp/', 'coverage/'] },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  {
    languageOptions: { globals: globals.node },
    rules: {
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_' }],
      'no-control-regex': 'off',
    },
  },
  // The device SDK and the demo page's script run in the browser.
  { files: ['sdk/src/**', 'demo/public/**', 'console/src/**'], languageOptions: { globals: globals.browser } },
);
