// Loaded by mocha / ts-node runs with `--require`: redirects the suite's import of the package to an
// adapter (keel) or a wrapper, and a bare `express` to the Express major under test, without editing
// the suite. Everything arrives in KEEL_PEER_* environment variables set by lib.mjs.
'use strict';
const Module = require('node:module');
const redirect = JSON.parse(process.env.KEEL_PEER_REDIRECT || '{}');
const express = process.env.KEEL_PEER_EXPRESS || '';
const bypass = new Set(JSON.parse(process.env.KEEL_PEER_BYPASS || '[]'));
const resolve = Module._resolveFilename;
Module._resolveFilename = function keelPeerResolve(request, parent, ...rest) {
  if (express && request === 'express') return resolve.call(this, express, parent, ...rest);
  const file = resolve.call(this, request, parent, ...rest);
  const to = redirect[file];
  // The adapters and wrappers themselves load the real files.
  if (to === undefined || (parent && bypass.has(parent.filename))) return file;
  return to;
};
