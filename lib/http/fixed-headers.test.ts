import assert from 'node:assert/strict';
import http, { type ServerResponse } from 'node:http';
import { describe, it } from 'node:test';
import { fixedHeader, getCheckedHeader, setCheckedHeader, setFixedHeaders } from './fixed-headers.js';

/** A response of a real node:http server, handed to `use` before it is answered. */
async function onRealResponse(use: (res: ServerResponse) => void): Promise<{ headers: http.IncomingHttpHeaders; raw: string[] }> {
  const server = http.createServer((_req, res) => {
    use(res);
    res.end('ok');
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const { port } = server.address() as { port: number };
  try {
    return await new Promise((resolve, reject) => {
      http.get({ host: '127.0.0.1', port, path: '/' }, (res) => {
        res.resume();
        res.on('end', () => resolve({ headers: res.headers, raw: res.rawHeaders }));
      }).on('error', reject);
    });
  } finally {
    server.close();
  }
}

describe('fixed headers', () => {
  describe('when a header is checked once', () => {
    it('should refuse what setHeader refuses, with node\'s errors', () => {
      assert.throws(() => fixedHeader('Bad Name', 'x'), { code: 'ERR_INVALID_HTTP_TOKEN' });
      assert.throws(() => fixedHeader('X-Ok', 'a\r\nb'), { code: 'ERR_INVALID_CHAR' });
      assert.deepEqual(fixedHeader('X-Frame-Options', 'DENY'), { name: 'X-Frame-Options', key: 'x-frame-options', value: 'DENY' });
    });
  });

  describe('when written on a node:http response', () => {
    it('should send the headers as setHeader would, in order, with their names as given', async () => {
      const headers = [fixedHeader('X-Frame-Options', 'DENY'), fixedHeader('X-Content-Type-Options', 'nosniff')];
      const { headers: got, raw } = await onRealResponse((res) => {
        setFixedHeaders(res, headers);
        setCheckedHeader(res, 'X-Request-ID', 'x-request-id', 'abc');
        setCheckedHeader(res, 'Content-Length', 'content-length', 2);
      });
      assert.equal(got['x-frame-options'], 'DENY');
      assert.equal(got['x-content-type-options'], 'nosniff');
      assert.equal(got['x-request-id'], 'abc');
      assert.equal(got['content-length'], '2');
      assert.deepEqual(raw.filter((_, i) => i % 2 === 0).slice(0, 3), ['X-Frame-Options', 'X-Content-Type-Options', 'X-Request-ID']);
    });

    it('should leave every later header call working as on a header setHeader set (getHeader, appendHeader, removeHeader)', async () => {
      const seen: unknown[] = [];
      const { headers } = await onRealResponse((res) => {
        setFixedHeaders(res, [fixedHeader('Vary', 'Origin')]);
        seen.push(res.getHeader('vary'), getCheckedHeader(res, 'vary'), res.hasHeader('Vary'), res.getHeaderNames());
        res.appendHeader('Vary', 'Accept-Encoding');
        setFixedHeaders(res, [fixedHeader('X-Gone', '1')]);
        res.removeHeader('X-Gone');
      });
      assert.deepEqual(seen, ['Origin', 'Origin', true, ['vary']]);
      assert.equal(headers.vary, 'Origin, Accept-Encoding');
      assert.equal(headers['x-gone'], undefined);
    });

    it('should not share an entry between responses (appendHeader on one leaves the next alone)', async () => {
      const vary = [fixedHeader('Vary', 'Origin')];
      await onRealResponse((res) => {
        setFixedHeaders(res, vary);
        res.appendHeader('Vary', 'Accept');
      });
      const { headers } = await onRealResponse((res) => setFixedHeaders(res, vary));
      assert.equal(headers.vary, 'Origin');
    });
  });

  describe('when setHeader is wrapped', () => {
    it('should call the wrapper for every header', async () => {
      const calls: string[] = [];
      await onRealResponse((res) => {
        const own = res.setHeader.bind(res);
        res.setHeader = ((name: string, value: string) => {
          calls.push(name);
          return own(name, value);
        }) as typeof res.setHeader;
        setFixedHeaders(res, [fixedHeader('X-A', '1'), fixedHeader('X-B', '2')]);
        setCheckedHeader(res, 'X-C', 'x-c', '3');
      });
      assert.deepEqual(calls, ['X-A', 'X-B', 'X-C']);
    });
  });

  describe('when the headers were sent already', () => {
    it("should throw node's ERR_HTTP_HEADERS_SENT, as setHeader does", async () => {
      let thrown: unknown;
      await onRealResponse((res) => {
        res.writeHead(200);
        try {
          setFixedHeaders(res, [fixedHeader('X-A', '1')]);
        } catch (err) {
          thrown = err;
        }
      });
      assert.equal((thrown as { code?: string }).code, 'ERR_HTTP_HEADERS_SENT');
    });
  });
});
