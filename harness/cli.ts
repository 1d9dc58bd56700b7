#!/usr/bin/env node
/** Package bin `keel-conformance` (see harness/conformance/cli-main.ts for the options). */
import { main } from './conformance/cli-main.js';

process.exitCode = await main(process.argv.slice(2));
