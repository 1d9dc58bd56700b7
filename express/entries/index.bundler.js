// keel/express as an ES module for bundlers (esbuild, webpack, Rollup and Vite match the "module" condition; node does not). It
// re-exports the CommonJS build (./index.cjs) rather than being a second build,
// so that `import` and `require()` give one module instance: require('keel/express') === (await import('keel/express')).default,
// and an app, its tests and its plugins share one `express.request` / `express.response` / Router class however each
// loads keel/express (no dual-package hazard). The named exports are express@5's.
import express from './index.cjs';

export default express;
export const { application, json, raw, request, response, Route, Router, text, urlencoded } = express;
const serveStatic = express.static;
export { serveStatic as static };
