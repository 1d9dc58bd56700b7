/**
 * Express 5's router rules (the `router` package's index.js, Copyright (c) 2009-2013 TJ Holowaychuk, 2013 Roman
 * Shtylman, 2014-2015 Douglas Christopher Wilson; MIT): what router.handle does at the points listed by
 * RouterRules.
 */
import type { AnyFn } from '../utils.js';
import type { RouterRules } from './types.js';

function noop() {}

export const ROUTER_RULES: RouterRules = {
  literal: /^[A-Za-z0-9_~.-]+$/,
  endsMountPath: (c) => !c || c === '/',
  unslash: (url, removed) => url === '/' || url.startsWith('/?') || (removed.endsWith('/') && url[0] === '/'),
  allow(methods, route) {
    methods.push(...route._methods());
  },
  optionsAnswer,
  forwardsRejection: () => true,
  matched: noop,
};

/** Sorted, de-duplicated and comma-space separated as text/plain. */
function optionsAnswer(done: AnyFn, res: any, methods: string[]): AnyFn {
  return function optionsDone(err?: unknown) {
    if (err || methods.length === 0) return done(err);
    try {
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
