/**
 * Type tests: a route's schemas (issue 25 item 3). A literal schema that is not a JSON Schema is a
 * compile error at the bad value; route options take snake_case keys only, so two spellings of one
 * key cannot both be written (each `@ts-expect-error` must stay an error).
 */
import { createApp } from '../../lib/index.js';
import { expectType, type Equal } from './expect.js';

createApp({}, (app) => {
  // Good schemas still type the handler.
  app.post('/notes', (d) => {
    expectType<Equal<typeof d.body, { title?: string; [k: string]: unknown }>>(true);
    return d.body.title;
  }, { body: { type: 'object', properties: { title: { type: 'string' } } } });
  app.get('/r', () => ({ id: 1 }), { response: { type: 'object', properties: { id: { type: 'integer' } } } });

  // @ts-expect-error `strng` is not a JSON Schema type
  app.post('/bad', () => ({}), { body: { type: 'object', properties: { title: { type: 'strng' } } } });
  // @ts-expect-error `required` is a list of names
  app.get('/bad-response', () => ({}), { response: { type: 'object', required: 'id' } });

  // A schema typed as a plain object is left to the registration-time check (an AppError naming the part).
  const loose: Record<string, unknown> = { type: 'object' };
  app.post('/loose', () => ({}), { body: loose });

  // @ts-expect-error route options are snake_case: `maxBodySize` next to `max_body_size` does not compile
  app.post('/both', () => ({}), { max_body_size: 10, maxBodySize: 20 });
});
