#!/usr/bin/env node
// Entry point of `npx cua`. In a checkout (the TypeScript sources are here) it runs them through tsx, so an edit
// takes effect without a build and a stale dist/ is never run; in the installed package (only dist/ is shipped) it
// runs the compiled CLI.
const fs = require('node:fs');
const path = require('node:path');

const source = path.join(__dirname, '..', 'cli', 'cli.ts');
let cli;
if (fs.existsSync(source)) {
  require('tsx/cjs/api').register();
  cli = require(source);
} else {
  cli = require('../dist/cli/cli.js');
}
cli.main(process.argv.slice(2)).then((code) => {
  if (typeof code === 'number') process.exitCode = code;
});
