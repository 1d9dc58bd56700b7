// The ESM counterpart of hook.cjs (node --import): registers resolve hooks for suites loaded as ES
// modules (helmet's, through tsx). Registered after tsx, so it runs first and sees tsx's answer.
import { register } from 'node:module';
register(new URL('./hook-esm-resolve.mjs', import.meta.url), import.meta.url);
