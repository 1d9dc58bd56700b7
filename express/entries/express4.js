// keel/express4 as an ES module. It re-exports the CommonJS build (./express4.cjs) rather than being a second build,
// so that `import` and `require()` give one module instance: require('keel/express4') === (await import('keel/express4')).default,
// and an app, its tests and its plugins share one `express.request` / `express.response` / Router class however each
// loads keel/express4 (no dual-package hazard). The named exports are express@4's.
import { createRequire } from 'node:module';

// createRequire rather than `import express from './express4.cjs'`: node's import of a CommonJS file lexes it for named
// exports and loads it through the ES module loader, which made `import('keel/express')` cost ~1.3-1.8x the CPU of
// `import('express')` (npm run bench:load); bundlers take express4.bundler.js (the "module" condition) instead.
const express = createRequire(import.meta.url)('./express4.cjs');

export default express;
export const { application, json, query, raw, request, response, Route, Router, text, urlencoded } = express;
const serveStatic = express.static;
export { serveStatic as static };
