// Every key the sources look up exists in en.json, and every key of en.json
// is used (directly, or through one of the dynamic prefixes below). The Go
// test in internal/classroom/i18n checks the other catalogues against en.
// Keys "learn." (the learner portal) and "cert." (the certificate verify
// page) are rendered by the Go server, and the build leaves them out of the
// bundles: internal/portal and internal/cert check those.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync, readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';

const root = new URL('..', import.meta.url).pathname;
const en = JSON.parse(readFileSync(join(root, '../../internal/classroom/i18n/en.json'), 'utf8'));

function sources(dir) {
  return readdirSync(dir).flatMap((name) => {
    const p = join(dir, name);
    return statSync(p).isDirectory() ? sources(p) : /\.tsx?$/.test(name) ? [p] : [];
  });
}

const text = sources(join(root, 'src'))
  .map((p) => readFileSync(p, 'utf8'))
  .join('\n');
const literal = new Set([...text.matchAll(/\bt\(\s*'([^']+)'/g)].map((m) => m[1]));
const dynamic = [...text.matchAll(/\bt\(\s*`([^`$]+)\$\{/g)].map((m) => m[1]);

test('every looked-up key is in en.json', () => {
  const missing = [...literal].filter((k) => !(k in en));
  assert.deepEqual(missing, []);
});

test('every key of en.json is used', () => {
  const unused = Object.keys(en).filter(
    (k) => !k.startsWith('learn.') && !k.startsWith('cert.') && !literal.has(k) && !dynamic.some((prefix) => k.startsWith(prefix)),
  );
  assert.deepEqual(unused, []);
});

test('dynamic lookups have keys', () => {
  for (const prefix of dynamic) assert.ok(Object.keys(en).some((k) => k.startsWith(prefix)), prefix);
});
