import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { recordJsonSchemas } from '../lib/records/index.js';

describe('when the record JSON Schemas are checked in under schemas/', () => {
  for (const [name, schema] of Object.entries(recordJsonSchemas())) {
    it(`should keep schemas/${name}.schema.json in step with the ${name} record (run npm run schemas)`, () => {
      const file = JSON.parse(readFileSync(new URL(`../schemas/${name}.schema.json`, import.meta.url), 'utf8'));
      assert.deepEqual(file, { $id: `https://keel.dev/schemas/${name}.schema.json`, ...schema });
    });
  }
});
