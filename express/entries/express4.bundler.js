// keel/express4 as an ES module for bundlers (esbuild, webpack, Rollup and Vite match the "module" condition; node does not). It
// re-exports the CommonJS build (./express4.cjs) rather than being a second build,
// so that `import` and `require()` give one module instance: require('keel/express4') === (await import('keel/express4')).default,
// and an app, its tests and its plugins share one `express.request` / `express.response` / Router class however each
// loads keel/express4 (no dual-package hazard). The named exports are express@4's.
import express from './express4.cjs';

export default express;
export const { application, json, query, raw, request, response, Route, Router, text, urlencoded } = express;
const serveStatic = express.static;
export { serveStatic as static };
