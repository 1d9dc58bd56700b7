/**
 * The automatic answer to OPTIONS when no handler answered: the methods of every route that matched the path.
 * Express 5 sends them sorted, de-duplicated and comma-space separated as text/plain; Express 4 with res.send.
 */
import type { AnyFn } from '../utils.js';

export function optionsResponder(done: AnyFn, res: any, methods: string[], v4: boolean): AnyFn {
  return function optionsDone(err?: unknown) {
    if (err || methods.length === 0) return done(err);
    try {
      if (v4) {
        const body = methods.join(',');
        res.set('Allow', body);
        res.send(body);
        return;
      }
      const allow = [...new Set(methods)].sort().join(', ');
      res.setHeader('Allow', allow);
      res.setHeader('Content-Length', Buffer.byteLength(allow));
      res.setHeader('Content-Type', 'text/plain');
      res.setHeader('X-Content-Type-Options', 'nosniff');
      res.end(allow);
    } catch (e) {
      done(e);
    }
  };
}
