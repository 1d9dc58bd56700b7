/**
 * The AsyncAPI documents of the shared conformance corpus (read-only, never copied into the repo):
 * every document parses, its structure is reported faithfully, and every message example the
 * document itself gives validates against that message's payload schema.
 */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parse as parseYaml } from 'yaml';
import { analyseAsyncApi, parseAsyncApi, PayloadValidator, follow } from './index.js';

const ROOT = fileURLToPath(new URL('../../../shared/conformance/testing_data/', import.meta.url));
const DIRS = ['asyncapi_schemas', 'schemas'];

function documents(): Array<[string, Record<string, unknown>]> {
  const out: Array<[string, Record<string, unknown>]> = [];
  for (const dir of DIRS) {
    const abs = join(ROOT, dir);
    if (!existsSync(abs)) continue;
    for (const name of readdirSync(abs).sort()) {
      const text = readFileSync(join(abs, name), 'utf8');
      const doc = name.endsWith('.json') ? JSON.parse(text) : /\.ya?ml$/.test(name) ? parseYaml(text) : undefined;
      if (doc && typeof doc === 'object' && 'asyncapi' in doc) out.push([`${dir}/${name}`, doc as Record<string, unknown>]);
    }
  }
  return out;
}

const docs = existsSync(ROOT) ? documents() : [];

describe('AsyncAPI conformance documents', () => {
  if (docs.length === 0) {
    it.skip(`skipped: no AsyncAPI documents under ${ROOT} (the shared conformance corpus is absent)`, () => {});
    return;
  }
  const validator = new PayloadValidator();
  for (const [name, doc] of docs) {
    describe(`when ${name} is parsed`, () => {
      const result = parseAsyncApi(doc);
      const info = doc.info as { title: string; version: string };
      it('should report its version and info', () => {
        assert.equal(result.spec_version, doc.asyncapi);
        assert.equal(result.title, info.title);
        assert.equal(result.api_version, info.version);
      });
      it('should list every channel with its message keys', () => {
        const channels = doc.channels as Record<string, { messages?: Record<string, unknown> }>;
        assert.deepEqual(result.channels.map((c) => c.name), Object.keys(channels));
        for (const c of result.channels) assert.deepEqual(c.messages, Object.keys(channels[c.name]!.messages ?? {}));
      });
      it('should resolve every operation to one of its channels', () => {
        const ops = (doc.operations ?? {}) as Record<string, { action: string }>;
        assert.deepEqual(result.operations.map((o) => o.name), Object.keys(ops));
        const names = new Set(result.channels.map((c) => c.name));
        for (const o of result.operations) {
          assert.ok(names.has(o.channel), `${o.name} → ${o.channel}`);
          assert.equal(o.action, ops[o.name]!.action);
        }
      });
      it('should resolve payload schemas without dangling local $refs', () => {
        for (const m of result.messages) {
          const refs = JSON.stringify(m.schema ?? null).match(/"\$ref":"[^"]*"/g) ?? [];
          // What remains may only be a recursive reference, which must still point into the document.
          for (const r of refs) assert.doesNotThrow(() => follow(doc, JSON.parse(`{${r}}`), '#'), `${m.name}: ${r}`);
        }
      });
      const model = analyseAsyncApi(doc);
      const examples: Array<[string, string, unknown]> = [];
      for (const ch of model.channels) {
        for (const m of ch.messages) {
          const msg = follow(doc, { $ref: m.pointer }, '#').value as { examples?: Array<{ payload?: unknown }> };
          for (const ex of msg.examples ?? []) if (ex.payload !== undefined) examples.push([ch.name, m.name, ex.payload]);
        }
      }
      if (examples.length === 0) {
        it.skip(`skipped: ${name} gives no message examples to validate`, () => {});
        return;
      }
      it(`should find each of its ${examples.length} message examples valid`, () => {
        for (const [channel, message, payload] of examples) {
          assert.deepEqual(validator.validate(doc, channel, message, payload), { valid: true, errors: [] }, `${channel} / ${message}`);
        }
      });
      it('should find an example invalid once it is no longer an object', () => {
        const [channel, message] = examples[0]!;
        const r = validator.validate(doc, channel, message, 42);
        assert.equal(r.valid, false);
        assert.ok(r.errors.length > 0);
      });
    });
  }
});
