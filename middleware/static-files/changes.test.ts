/** Nothing about a file is remembered between requests: every answer reflects the directory as it is now. */
import { after, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, renameSync, rmSync, symlinkSync, unlinkSync, utimesSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import express from 'express';
import request from 'supertest';
import { staticFiles } from './index.js';

const base = mkdtempSync(join(tmpdir(), 'keel-static-changes-'));
const pub = join(base, 'public');
mkdirSync(pub);
mkdirSync(join(base, 'outside'));
writeFileSync(join(base, 'outside', 'secret.txt'), 'outside secret');
after(() => rmSync(base, { recursive: true, force: true }));

const app = express();
app.use(staticFiles({ directory: pub, route_prefix: '/s' }));
app.use((_req, res) => {
  res.status(404).type('text/plain').send('fell through');
});

describe('staticFiles: when a file changes between requests', () => {
  it('should serve the new content with new validators', async () => {
    writeFileSync(join(pub, 'app.css'), 'a { color: red }');
    utimesSync(join(pub, 'app.css'), new Date('2020-01-01'), new Date('2020-01-01'));
    const first = await request(app).get('/s/app.css').expect(200);
    assert.equal(first.text, 'a { color: red }');
    writeFileSync(join(pub, 'app.css'), 'a { color: blue; margin: 0 }');
    const second = await request(app).get('/s/app.css').expect(200);
    assert.equal(second.text, 'a { color: blue; margin: 0 }');
    assert.notEqual(second.headers.etag, first.headers.etag);
    assert.notEqual(second.headers['last-modified'], first.headers['last-modified']);
    await request(app).get('/s/app.css').set('If-None-Match', first.headers.etag as string).expect(200);
  });

  it('should fall through once the file is deleted', async () => {
    writeFileSync(join(pub, 'gone.txt'), 'here');
    await request(app).get('/s/gone.txt').expect(200, 'here');
    unlinkSync(join(pub, 'gone.txt'));
    await request(app).get('/s/gone.txt').expect(404, 'fell through');
  });

  it('should refuse a file that has been replaced by a symlink leading outside', async () => {
    writeFileSync(join(pub, 'swap.txt'), 'inside');
    await request(app).get('/s/swap.txt').expect(200, 'inside');
    unlinkSync(join(pub, 'swap.txt'));
    symlinkSync(join(base, 'outside', 'secret.txt'), join(pub, 'swap.txt'));
    const res = await request(app).get('/s/swap.txt').expect(403);
    assert.match(String(res.headers['content-type']), /^application\/problem\+json/);
    assert.doesNotMatch(res.text, /outside secret/);
  });

  it('should redirect a name that has become a directory, and serve its index page', async () => {
    writeFileSync(join(pub, 'docs'), 'a file for now');
    const file = await request(app).get('/s/docs').expect(200);
    assert.equal(Buffer.from(file.body as Buffer).toString('utf8'), 'a file for now');
    unlinkSync(join(pub, 'docs'));
    mkdirSync(join(pub, 'docs'));
    writeFileSync(join(pub, 'docs', 'index.html'), '<p>docs</p>');
    await request(app).get('/s/docs').expect(301).expect('Location', '/s/docs/');
    await request(app).get('/s/docs/').expect(200, '<p>docs</p>');
  });

  it('should refuse a directory whose index page has become a symlink leading outside', async () => {
    mkdirSync(join(pub, 'guide'));
    writeFileSync(join(pub, 'guide', 'index.html'), '<p>guide</p>');
    await request(app).get('/s/guide/').expect(200, '<p>guide</p>');
    renameSync(join(pub, 'guide', 'index.html'), join(pub, 'guide', 'old.html'));
    symlinkSync(join(base, 'outside', 'secret.txt'), join(pub, 'guide', 'index.html'));
    await request(app).get('/s/guide/').expect(403);
  });
});
