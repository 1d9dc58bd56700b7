// keel/express as an ES module. It re-exports the CommonJS build (./index.cjs) rather than being a second build,
// so that `import` and `require()` give one module instance: require('keel/express') === (await import('keel/express')).default,
// and an app, its tests and its plugins share one `express.request` / `express.response` / Router class however each
// loads keel/express (no dual-package hazard). The named exports are express@5's.
import { createRequire } from 'node:module';

// createRequire rather than `import express from './index.cjs'`: node's import of a CommonJS file lexes it for named
// exports and loads it through the ES module loader, which made `import('keel/express')` cost ~1.3-1.8x the CPU of
// `import('express')` (npm run bench:load); bundlers take index.bundler.js (the "module" condition) instead.
const express = createRequire(import.meta.url)('./index.cjs');

export default express;
export const { application, json, raw, request, response, Route, Router, text, urlencoded } = express;
const serveStatic = express.static;
export { serveStatic as static };
