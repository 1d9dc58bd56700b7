/** securityHeaders inside keel's createApp: on by default, AppOptions.securityHeaders, docs mounts. */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import request from 'supertest';
import { createApp } from '../../lib/app/app.js';
import { docsPageCsp, DEFAULT_API_CSP } from './index.js';

describe('securityHeaders under createApp: with the defaults', () => {
  const router = createApp({}, (app) => {
    app.get('/data', () => ({ ok: true }));
    app.mount('GET', '/docs', (_req, res) => {
      res.setHeader('Content-Type', 'text/html');
      res.end('<!doctype html><title>docs</title>');
    }, { public: true, securityHeaders: { content_security_policy: docsPageCsp() } });
  }).intoRouter();

  it('should send the API header set on keel routes', async () => {
    const res = await request(router).get('/data');
    assert.equal(res.status, 200);
    assert.equal(res.headers['content-security-policy'], DEFAULT_API_CSP);
    assert.equal(res.headers['x-content-type-options'], 'nosniff');
    assert.equal(res.headers['x-frame-options'], 'DENY');
    assert.equal(res.headers['referrer-policy'], 'no-referrer');
    assert.equal(res.headers['strict-transport-security'], undefined);
    assert.equal(res.headers['x-powered-by'], undefined);
  });

  it('should send the documentation CSP on a docs mount', async () => {
    const res = await request(router).get('/docs');
    assert.equal(res.headers['content-security-policy'], docsPageCsp());
    assert.equal(res.headers['x-content-type-options'], 'nosniff');
  });
});

describe('securityHeaders under createApp: with AppOptions.securityHeaders', () => {
  it('should send HSTS when the app asks for it', async () => {
    const router = createApp({}, (app) => app.get('/data', () => ({ ok: true })), { securityHeaders: { hsts_max_age: 31536000 } }).intoRouter();
    const res = await request(router).get('/data');
    assert.equal(res.headers['strict-transport-security'], 'max-age=31536000; includeSubDomains');
  });

  it('should send none with securityHeaders: false', async () => {
    const router = createApp({}, (app) => app.get('/data', () => ({ ok: true })), { securityHeaders: false }).intoRouter();
    const res = await request(router).get('/data');
    assert.equal(res.headers['x-content-type-options'], undefined);
    assert.equal(res.headers['content-security-policy'], undefined);
  });
});
