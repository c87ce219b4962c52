// Builds the live classroom client, the pre-class check page, the playback
// page and the learner portal's lesson player into
// internal/classroom/webdist/assets with fixed file names (no hashes): the Go
// server renders the HTML itself and links classroom.{js,css},
// check.{js,css}, playback.{js,css} or learn.{js,css} by name. The output
// is committed and must be byte-for-byte reproducible (CI rebuilds and
// diffs it).
import { defineConfig, type Plugin } from 'vite';
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { fileURLToPath } from 'node:url';

const here = (p: string) => fileURLToPath(new URL(p, import.meta.url));
const require = createRequire(import.meta.url);

// pdf.js runs its parser in a worker that it loads by URL: the prebuilt,
// minified worker of the pinned pdfjs-dist, copied as is to a fixed name
// (src/classroom/board/pdf.ts points GlobalWorkerOptions.workerSrc at it).
function pdfWorker(): Plugin {
  return {
    name: 'lectern-pdf-worker',
    apply: 'build',
    generateBundle() {
      this.emitFile({
        type: 'asset',
        fileName: 'pdf-worker.js',
        source: readFileSync(require.resolve('pdfjs-dist/build/pdf.worker.min.mjs')),
      });
    },
  };
}

// The catalogues also hold strings only the Go server renders: the learner
// portal's (keys "learn.") and the certificate verify page's ("cert."). They
// stay out of the browser bundles.
const SERVER_ONLY = ['learn.', 'cert.'];

function serverOnlyStrings(): Plugin {
  return {
    name: 'lectern-server-only-strings',
    enforce: 'pre',
    transform(code, id) {
      if (!/[\\/]internal[\\/]classroom[\\/]i18n[\\/][a-z]+\.json$/.test(id)) return null;
      const cat = JSON.parse(code) as Record<string, string>;
      const kept = Object.fromEntries(Object.entries(cat).filter(([k]) => !SERVER_ONLY.some((p) => k.startsWith(p))));
      return { code: JSON.stringify(kept, null, 2), map: null };
    },
  };
}

export default defineConfig({
  root: here('.'),
  base: '/classroom/assets/',
  publicDir: false,
  logLevel: 'warn',
  plugins: [serverOnlyStrings(), pdfWorker()],
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
        playback: here('src/playback/main.tsx'),
        learn: here('src/learn/main.ts'),
      },
      preserveEntrySignatures: false,
      output: {
        entryFileNames: '[name].js',
        chunkFileNames: (chunk) =>
          chunk.facadeModuleId?.endsWith('.json') ? `i18n-${chunk.name}.js` : `chunk-${chunk.name}.js`,
        assetFileNames: '[name][extname]',
        // What the pages use (preact, i18n, icons) goes in one chunk-shared.js;
        // what the classroom and the playback page share (the board's model
        // and view, the presentation view, the chat list) in chunk-board.js.
        // Only that: what the classroom shares with its own lazy chunks (the
        // board export) stays in classroom.js.
        codeSplitting: {
          groups: [
            { name: 'shared', minShareCount: 2, test: /node_modules[\\/]preact[\\/]|src[\\/]shared[\\/]|i18n[\\/]en\.json/ },
            {
              name: 'board',
              minShareCount: 2,
              test: /node_modules[\\/]perfect-freehand[\\/]|src[\\/]classroom[\\/](board[\\/](model|view|draw|pdf)|ui[\\/](ChatLog|format|presentationView))\.tsx?$/,
            },
          ],
        },
      },
    },
  },
});
