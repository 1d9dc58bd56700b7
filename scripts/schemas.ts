// Writes the JSON Schemas of ServerConfig and the per-route records to schemas/ (npm run schemas).
// test/json-schemas-files.test.ts checks that the checked-in files match the records.
import { mkdirSync, writeFileSync } from 'node:fs';
import { join, dirname } from 'node:path';
import { fileURLToPath } from 'node:url';
import { recordJsonSchemas } from '../lib/records/index.js';

const out = join(dirname(fileURLToPath(import.meta.url)), '..', 'schemas');
mkdirSync(out, { recursive: true });
for (const [name, schema] of Object.entries(recordJsonSchemas())) {
  writeFileSync(join(out, `${name}.schema.json`), `${JSON.stringify({ $id: `https://keel.dev/schemas/${name}.schema.json`, ...schema }, null, 2)}\n`);
}
console.log(`wrote ${Object.keys(recordJsonSchemas()).length} schemas to ${out}`);
