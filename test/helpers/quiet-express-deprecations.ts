/**
 * Silences depd's deprecation lines of Express (and body-parser) in tests that exercise Express 4's deprecated
 * forms on purpose, as Express's own suite does (its test/support/env.js). Import it first: depd reads
 * NO_DEPRECATION when a module creates its deprecate function, i.e. when express is loaded.
 */
process.env.NO_DEPRECATION = [process.env.NO_DEPRECATION, 'body-parser', 'express'].filter(Boolean).join(',');
