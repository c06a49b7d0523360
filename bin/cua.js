#!/usr/bin/env node
// Entry point of `npx cua`: runs the TypeScript CLI through tsx (no build step).
require('tsx/cjs/api').register();
require('../client/cli.ts')
  .main(process.argv.slice(2))
  .then((code) => {
    if (typeof code === 'number') process.exitCode = code;
  });
