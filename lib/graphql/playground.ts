/**
 * The GraphiQL playground, served entirely from local packages (graphiql's UMD build with React 18's
 * UMD builds): no CDN, so it works offline and under a strict CSP. The page carries no inline
 * script (helmet's default `script-src 'self'` would block one); its start-up script is an asset too.
 */
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import type { ServerResponse } from 'node:http';
import { dirname, join } from 'node:path';
import type { KeelRequest } from '../http/request.js';

/**
 * CSP for the GraphQL path when the playground is on: everything from this origin only. GraphiQL sets
 * inline styles, and its icons are data: URIs; no inline script, no eval, no third-party host.
 */
export const PLAYGROUND_CSP = "default-src 'self'; script-src 'self'; style-src 'self' 'unsafe-inline'; img-src 'self' data:; font-src 'self' data:; connect-src 'self'; frame-ancestors 'none'";

/** How long browsers may cache the playground assets, seconds. */
export const PLAYGROUND_ASSET_MAX_AGE = 3600;

const require = createRequire(import.meta.url);

function packageFile(pkg: string, file: string): () => Buffer {
  let cached: Buffer | undefined;
  // Read on first use: an App without a playground never touches the 1.4 MB of assets.
  return () => (cached ??= readFileSync(join(dirname(require.resolve(`${pkg}/package.json`)), file)));
}

const INIT_SCRIPT = `'use strict';
(function () {
  var el = document.getElementById('graphiql');
  var fetcher = GraphiQL.createFetcher({ url: el.getAttribute('data-endpoint') });
  ReactDOM.createRoot(el).render(React.createElement(GraphiQL, { fetcher: fetcher, defaultEditorToolsVisibility: true }));
})();
`;

const ASSETS: Readonly<Record<string, { type: string; body: () => Buffer }>> = {
  'react.production.min.js': { type: 'text/javascript; charset=utf-8', body: packageFile('react', 'umd/react.production.min.js') },
  'react-dom.production.min.js': { type: 'text/javascript; charset=utf-8', body: packageFile('react-dom', 'umd/react-dom.production.min.js') },
  'graphiql.min.js': { type: 'text/javascript; charset=utf-8', body: packageFile('graphiql', 'graphiql.min.js') },
  'graphiql.min.css': { type: 'text/css; charset=utf-8', body: packageFile('graphiql', 'graphiql.min.css') },
  'init.js': { type: 'text/javascript; charset=utf-8', body: () => Buffer.from(INIT_SCRIPT) },
};

/** Names of the files served under the assets path. */
export const PLAYGROUND_ASSET_NAMES: readonly string[] = Object.keys(ASSETS);

function escapeAttr(s: string): string {
  return s.replace(/&/g, '&amp;').replace(/"/g, '&quot;').replace(/</g, '&lt;').replace(/>/g, '&gt;');
}

/** The playground HTML for a GraphQL endpoint, loading its assets from `assetsPath`. */
export function playgroundPage(endpoint: string, assetsPath: string, title = 'GraphiQL'): string {
  const a = (name: string) => escapeAttr(`${assetsPath}/${name}`);
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>${escapeAttr(title)}</title>
<link rel="icon" href="data:,">
<link rel="stylesheet" href="${a('graphiql.min.css')}">
<style>body { margin: 0; height: 100vh; } #graphiql { height: 100vh; }</style>
</head>
<body>
<div id="graphiql" data-endpoint="${escapeAttr(endpoint)}">Loading GraphiQL…</div>
<script src="${a('react.production.min.js')}"></script>
<script src="${a('react-dom.production.min.js')}"></script>
<script src="${a('graphiql.min.js')}"></script>
<script src="${a('init.js')}"></script>
</body>
</html>
`;
}

/** True for a browser navigation to the endpoint: GET, HTML accepted, no GraphQL `query` parameter. */
export function wantsPlayground(req: KeelRequest): boolean {
  if (req.method !== 'GET' && req.method !== 'HEAD') return false;
  const accept = req.headers.accept ?? '';
  if (!accept.includes('text/html')) return false;
  return !new URL(req.url ?? '/', 'http://localhost').searchParams.has('query');
}

/** Send the playground page. */
export function sendPlaygroundPage(res: ServerResponse, endpoint: string, assetsPath: string): void {
  const body = playgroundPage(endpoint, assetsPath);
  res.statusCode = 200;
  res.setHeader('Content-Type', 'text/html; charset=utf-8');
  res.setHeader('Content-Length', Buffer.byteLength(body));
  res.setHeader('Cache-Control', 'no-cache');
  res.end(res.req?.method === 'HEAD' ? undefined : body);
}

/** Serve one asset by file name; false when `name` is not one of ours (the caller answers 404). */
export function sendPlaygroundAsset(res: ServerResponse, name: string): boolean {
  const asset = Object.hasOwn(ASSETS, name) ? ASSETS[name] : undefined;
  if (!asset) return false;
  const body = asset.body();
  res.statusCode = 200;
  res.setHeader('Content-Type', asset.type);
  res.setHeader('Content-Length', body.length);
  res.setHeader('Cache-Control', `public, max-age=${PLAYGROUND_ASSET_MAX_AGE}`);
  res.setHeader('X-Content-Type-Options', 'nosniff');
  res.end(res.req?.method === 'HEAD' ? undefined : body);
  return true;
}
