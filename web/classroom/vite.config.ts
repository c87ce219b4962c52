// Builds the live classroom client and the pre-class check page into
// internal/classroom/webdist/assets with fixed file names (no hashes): the Go
// server renders the HTML shells itself and links classroom.{js,css} or
// check.{js,css} by name. The output is committed and must be byte-for-byte
// reproducible (CI rebuilds and diffs it).
import { defineConfig } from 'vite';
import { fileURLToPath } from 'node:url';

const here = (p: string) => fileURLToPath(new URL(p, import.meta.url));

export default defineConfig({
  root: here('.'),
  base: '/classroom/assets/',
  publicDir: false,
  logLevel: 'warn',
  oxc: {
    jsx: { runtime: 'automatic', importSource: 'preact' },
  },
  json: { stringify: true },
  resolve: {
    alias: { '@i18n': here('../../internal/classroom/i18n') },
  },
  build: {
    outDir: here('../../internal/classroom/webdist/assets'),
    assetsDir: '.',
    emptyOutDir: true,
    target: 'es2022',
    modulePreload: false,
    sourcemap: false,
    cssCodeSplit: true,
    reportCompressedSize: true,
    rolldownOptions: {
      input: {
        classroom: here('src/classroom/main.tsx'),
        check: here('src/check/main.tsx'),
      },
      preserveEntrySignatures: false,
      output: {
        entryFileNames: '[name].js',
        chunkFileNames: (chunk) =>
          chunk.facadeModuleId?.endsWith('.json') ? `i18n-${chunk.name}.js` : `chunk-${chunk.name}.js`,
        assetFileNames: '[name][extname]',
        // What both pages use (preact, i18n, icons) goes in one chunk-shared.js.
        codeSplitting: { groups: [{ name: 'shared', minShareCount: 2 }] },
      },
    },
  },
});
