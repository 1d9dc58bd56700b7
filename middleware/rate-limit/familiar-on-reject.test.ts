/**
 * express-rate-limit's options together with keel's onReject: refusals of a package-style limiter are
 * delivered the way onReject says, and `handler` (the package's own refusal hook) excludes onReject.
 */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import request from 'supertest';
import { rateLimit } from './index.js';
import { ConfigError, HttpError } from '../../lib/http/errors.js';
import { EXPRESS_VERSIONS } from '../../test/helpers/express-versions.js';

for (const { name, express } of EXPRESS_VERSIONS) {
  describe(`when express-rate-limit options meet onReject under ${name}`, () => {
    it("should hand the 429 to next(err) with its headers when onReject is 'next'", async () => {
      const app = express();
      app.use(rateLimit({ windowMs: 60_000, limit: 1, standardHeaders: 'draft-7', onReject: 'next' }));
      app.get('/', (_req, res) => {
        res.send('ok');
      });
      const seen: HttpError[] = [];
      app.use((err: HttpError, _req: unknown, res: { status(n: number): { json(b: unknown): void } }, _next: unknown) => {
        seen.push(err);
        res.status(err.status).json({ handedOn: true });
      });
      await request(app).get('/').expect(200);
      const res = await request(app).get('/').expect(429);
      assert.deepEqual(res.body, { handedOn: true });
      assert.ok(seen[0] instanceof HttpError);
      assert.equal(seen[0]!.status, 429);
      assert.match(seen[0]!.headers['Retry-After'] ?? '', /^\d+$/);
      assert.ok(seen[0]!.headers.RateLimit, 'the error carries the RateLimit header');
      assert.equal(seen[0]!.headers['X-RateLimit-Remaining'], '0', 'and the legacy headers express-rate-limit sends by default');
    });

    it('should refuse handler and onReject together with a ConfigError naming handler', () => {
      assert.throws(
        () => rateLimit({ windowMs: 1000, limit: 1, handler: (_req: unknown, res: { end(): void }) => void res.end(), onReject: 'next' }),
        (err: unknown) => err instanceof ConfigError && /handler/.test(err.message),
      );
    });
  });
}
