/**
 * A small implementation of the specification that is not keel: plain Fastify + Ajv, written for
 * docs/conformance.md's worked example. It serves the query_params, path_params and json_bodies
 * cases of a conformance manifest, the way another implementation's author would:
 *
 *   keel-conformance --exec "node --import tsx test/conformance-example/server.ts {case_file} {port}" \
 *     <corpus>/testing_data/query_params …
 *
 * It reads the manifest the harness writes ({case_file}), registers one route per method + route,
 * validates path, query, header, cookie and body values itself (Pydantic-style error items, the
 * corpus's), and answers a request that passes validation with the handler's answer the manifest
 * gives (`handler_response`), chosen by the X-Conformance-Case header where several cases share a
 * route. The manifest never says what a refused request must get: the 422s are this server's own work.
 */
import { readFileSync } from 'node:fs';
import Fastify, { type FastifyReply } from 'fastify';
import { validate, type Item, type ManifestCase } from './validation.js';

function problem(reply: FastifyReply, items: Item[]): FastifyReply {
  return reply
    .code(422)
    .type('application/problem+json')
    .send({ type: 'https://example.org/errors/validation-error', title: 'Request Validation Failed', status: 422, detail: `${items.length} validation error${items.length === 1 ? '' : 's'} in request`, errors: items });
}

const [caseFile, port] = process.argv.slice(2);
if (!caseFile || !port) {
  process.stderr.write('usage: server.ts <case_file> <port>\n');
  process.exit(2);
}
const manifest = JSON.parse(readFileSync(caseFile, 'utf8')) as { case_header: string; cases: ManifestCase[] };
const app = Fastify({ logger: false });
const routes = new Map<string, ManifestCase[]>();
for (const c of manifest.cases) {
  const key = `${c.method} ${c.route_colon.replace(/\*\w+$/, '*')}`;
  routes.set(key, [...(routes.get(key) ?? []), c]);
}
for (const [key, cases] of routes) {
  const [method, url] = key.split(' ') as [string, string];
  app.route({
    method: method as 'GET',
    url,
    handler: async (req, reply) => {
      const id = req.headers[manifest.case_header.toLowerCase()];
      const c = cases.find((x) => x.id === id) ?? cases[0]!;
      const items = validate(c, req);
      if (items.length) return problem(reply, items);
      // The handler's own answer, as the manifest gives it; every error above is this server's own work.
      const answer = c.handler_response;
      if (answer.error) return reply.code(answer.status).type('application/problem+json').send({ type: 'about:blank', title: 'Error', status: answer.status, ...(answer.error.detail ? { detail: answer.error.detail } : {}) });
      for (const [k, v] of Object.entries(answer.headers ?? {})) reply.header(k, v);
      reply.code(answer.status);
      return answer.body === undefined ? reply.send() : reply.send(answer.body);
    },
  });
}
await app.listen({ host: '127.0.0.1', port: Number(port) });
const stop = () => void app.close().then(() => process.exit(0));
process.once('SIGTERM', stop);
process.once('SIGINT', stop);
