// The one-way boundary between the core and the protocols (docs/architecture.md): protocols see the App
// through lib/app/plugin.ts only; the core loads protocol code only with import() (lib/app/builtins.ts).
// Import cycles anywhere are checked by `npm run cycles` (dpdm), which `npm test` runs.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = fileURLToPath(new URL('..', import.meta.url));
const PROTOCOLS = ['graphql', 'grpc', 'ws', 'jsonrpc', 'openapi', 'asyncapi'];
/** Core modules a protocol must not import. */
const CORE_INTERNALS = ['app/app.ts', 'app/builtins.ts', 'app/dispatch.ts', 'app/features.ts', 'server/server.ts', 'app/pipeline.ts', 'index.ts'];
/** lib/'s layer folders: the core beside lib/index.ts (docs/architecture.md, "Layers"). */
const LAYER_FOLDERS = ['http', 'ops', 'server', 'app'];

function sources(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const p = join(dir, name);
    if (statSync(p).isDirectory()) return sources(p);
    return name.endsWith('.ts') && !name.endsWith('.test.ts') ? [p] : [];
  });
}

/** Static import / export-from specifiers (type-only ones included), and dynamic import() ones apart. */
function importsOf(file: string): { static: string[]; dynamic: string[] } {
  const text = readFileSync(file, 'utf8');
  const statics = [...text.matchAll(/^(?:import|export)\s[^;]*?from\s+'([^']+)'|^import\s+'([^']+)'/gm)].map((m) => m[1] ?? m[2]!);
  const dynamic = [...text.matchAll(/import\('([^']+)'\)/g)].map((m) => m[1]!);
  return { static: statics, dynamic };
}

describe('when a protocol module imports the core', () => {
  for (const protocol of PROTOCOLS) {
    it(`should not import the App or the core's internals (lib/${protocol})`, () => {
      const bad: string[] = [];
      for (const file of sources(join(root, 'lib', protocol))) {
        for (const spec of importsOf(file).static) {
          if (!spec.startsWith('.')) continue;
          const target = relative(join(root, 'lib'), join(file, '..', spec)).replace(/\.js$/, '.ts');
          if (CORE_INTERNALS.includes(target)) bad.push(`${relative(root, file)} imports ${spec}`);
        }
      }
      assert.deepEqual(bad, []);
    });
  }
});

describe('when the core imports a protocol module', () => {
  it('should do it only with import() in lib/app/builtins.ts, or for dependency-free types', () => {
    // Types the App's declarations use, written without any optional package.
    const allowedTypes = ['grpc/types.js', 'jsonrpc/registry.js', 'ws/guard.js', 'background/index.js', 'background/install.js'];
    const bad: string[] = [];
    const core = [...readdirSync(join(root, 'lib')).filter((n) => n.endsWith('.ts') && !n.endsWith('.test.ts')).map((n) => join(root, 'lib', n)), ...LAYER_FOLDERS.flatMap((d) => sources(join(root, 'lib', d))), ...sources(join(root, 'middleware'))];
    for (const file of core) {
      const { static: statics, dynamic } = importsOf(file);
      for (const spec of statics) {
        if (!spec.startsWith('.')) continue;
        const target = relative(join(root, 'lib'), join(file, '..', spec));
        const protocol = PROTOCOLS.find((p) => target.startsWith(`${p}/`));
        if (protocol && !allowedTypes.includes(target)) bad.push(`${relative(root, file)} imports ${spec}`);
      }
      if (!file.endsWith('builtins.ts')) for (const spec of dynamic) if (spec.startsWith('.')) bad.push(`${relative(root, file)} loads ${spec}`);
    }
    assert.deepEqual(bad, []);
  });
});
