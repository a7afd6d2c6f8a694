// ESLint for the browser scripts: the canvas components (ui/live_*.js, labs/**/*.js) and the small components
// (ui/present_keys.js, ui/chart_download.js, ui/classroom_keeper.js). Run with `npx eslint .` (after `npm ci`).
import { readFileSync } from 'node:fs';

import js from '@eslint/js';
import globals from 'globals';

// ui.components.component_script joins, into one ES module per canvas component: `const PALETTE` and
// `const STYLE` (the palette, the component's stylesheet), ui/live_common.js, then the component's own script
const JOINED = { PALETTE: 'readonly', STYLE: 'readonly' };
// what ui/live_common.js shares with the scripts joined after it: the names on its `/* exported */` line
const commonText = readFileSync(new URL('./ui/live_common.js', import.meta.url), 'utf8');
const exported = commonText.match(/\/\* exported ([^*]+)\*\//);
if (!exported) throw new Error('ui/live_common.js has lost its /* exported */ line (see eslint.config.js)');
const COMMON = Object.fromEntries(exported[1].split(',').map((name) => [name.trim(), 'readonly']));

export default [
  { ignores: ['.venv/', 'node_modules/', 'tmp/'] },
  js.configs.recommended,
  {
    languageOptions: { ecmaVersion: 2022, sourceType: 'module', globals: globals.browser },
    linterOptions: { reportUnusedDisableDirectives: 'error' },
    rules: {
      // as the Python (pyproject.toml); max-len is deprecated in ESLint's core but kept until ESLint 11
      'max-len': ['error', { code: 120 }],
    },
  },
  // linted as a plain script (it has no import or export of its own), where `/* exported */` marks the names it
  // shares as used: any other top-level name it defines must be used in it
  { files: ['ui/live_common.js'], languageOptions: { sourceType: 'script', globals: JOINED } },
  { files: ['ui/live_plots.js', 'labs/**/*.js'],
    languageOptions: { globals: { ...JOINED, ...COMMON } } },
  // ui/charts.py writes `const PALETTE` before it
  { files: ['ui/chart_download.js'], languageOptions: { globals: { PALETTE: 'readonly' } } },
  { files: ['eslint.config.js'], languageOptions: { globals: globals.node } },
];
