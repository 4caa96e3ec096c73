/* Builds ../plotly-tycheon.min.js: plotly.js (the exact version in package-lock.json) with only the trace
   types and components the tycheon site's charts use (entry.js). Run `npm ci && npm run build` here.
   The esbuild settings are plotly.js's own for its dist bundles (esbuild-config.js, tasks/util/
   bundle_wrapper.mjs), including its compress-attributes step, which strips the attribute descriptions that
   only the schema browser reads (tasks/compress_attributes.js). For checks only: BUNDLE_ENTRY=<file>
   builds another entry (node_modules/plotly.js/lib/index-basic.js: 1,106,714 B, the basic bundle's traces
   and components through this pipeline), BUNDLE_OUT=<file> writes elsewhere, BUNDLE_MINIFY=0 keeps the
   code readable (for stack traces). */
'use strict';
const fs = require('fs');
const path = require('path');
const esbuild = require('esbuild');

const entry = process.env.BUNDLE_ENTRY || path.join(__dirname, 'entry.js');
const outfile = process.env.BUNDLE_OUT || path.join(__dirname, '..', 'plotly-tycheon.min.js');
const version = require('plotly.js/package.json').version;

// plotly.js 4 sources are formatted by biome, so a description may wrap: `description:\n 'text'` and
// `[...].join(\n ' '\n)`; the patterns allow that whitespace (upstream's one-line patterns do not)
const STRING = "'(?:[^'\\\\\\n]|\\\\.)*'";
function strip(attr, body) {
  return new RegExp('\\s*' + attr + ':\\s*' + body + ',?', 'g');
}
const META = [
  strip('description', STRING + '(?:\\s*\\+\\s*' + STRING + ')*(?=\\s*[,}])'),
  strip('description', '\\[[\\s\\S]*?\\]\\.join\\(\\s*' + STRING + '\\s*\\)'),
  strip('requiredOpts', '\\[[\\s\\S]*?\\]'),
  strip('otherOpts', '\\[[\\s\\S]*?\\]'),
  strip('hrName', STRING),
];

const compressAttributes = {
  name: 'compress-attributes',
  setup(build) {
    build.onLoad({ filter: /[\\/]plotly\.js[\\/]src[\\/].*\.js$/ }, async (args) => {
      let text = await fs.promises.readFile(args.path, 'utf8');
      for (const re of META) { text = text.replace(re, ''); }
      return { contents: text, loader: 'js' };
    });
  },
};

// src/registry.js requires maplibre-gl's stylesheet for the map trace, which this build does not register;
// plotly.js inlines it (esbuild-plugin-inline-css), here it resolves to nothing, so no CSS file is written
const noStylesheets = {
  name: 'no-stylesheets',
  setup(build) {
    build.onResolve({ filter: /\.css$/ }, (args) => ({ path: args.path, namespace: 'no-css' }));
    build.onLoad({ filter: /.*/, namespace: 'no-css' }, () => ({ contents: '', loader: 'js' }));
  },
};

const banner = `/**
* plotly.js (tycheon: scatter, bar) v${version}
* Copyright 2012-2026, Plotly, Inc.
* All rights reserved.
* Licensed under the MIT license
* Built by tycheon's templates/vendor/plotly-build/build.js from the npm package plotly.js@${version}
*/`;

esbuild.build({
  entryPoints: [entry],
  outfile,
  format: 'iife',
  globalName: 'Plotly',
  bundle: true,
  minify: process.env.BUNDLE_MINIFY !== '0',
  sourcemap: false,
  legalComments: 'eof',
  banner: { js: banner },
  plugins: [compressAttributes, noStylesheets],
  define: { global: 'window', 'define.amd': 'false' },
  target: 'es2016',
  logLevel: 'warning',
}).then(() => {
  console.log(`${path.relative(process.cwd(), outfile)}: ${fs.statSync(outfile).size} bytes`);
}).catch(() => process.exit(1));
