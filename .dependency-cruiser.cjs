// What each folder may import (in the spirit of Playwright's DEPS.list): every folder of source code has one entry,
// `'folder': [the project folders it may import]`; a module may always import its own folder. Type-only imports count,
// an import circle fails, and so does a folder with no entry. Entries are listed bottom first: a folder may only name
// folders above its own entry, so the folders stay layered (no two lean on each other). An entry may be a subfolder
// of another's (`workflows/stages`): its files then follow their own entry, and the outer folder must name it to
// import it. This table is the one place the rule is written; `npm run lint` (and so .ci/run) checks it.
const DEPS = {
  'src/common': [], // small helpers with no project imports (sleep, ConfigError, host patterns, IP ranges)
  'src/contract': ['src/common'], // the task contract, the activities' inputs and outputs, the URL policy (pure)
  demo: [], // the demo site (a server of its own)
  'src/coords': [], // model ↔ screen coordinates
  'src/image': [], // screenshot resizing and encoding
  'src/actions': [], // the action schemas, their descriptions and what an action acts on
  'src/policy': ['src/common', 'src/contract'], // the URL policy's private-address rule after DNS
  'src/infra': [], // local programs: the dev server, Chromium, the cluster, the build cache
  'src/telemetry': ['src/common', 'src/infra'], // OpenTelemetry: traces config, the agent's spans, tracer provider
  'src/codec': ['src/common'], // payload encryption
  'src/model': ['src/common', 'src/image', 'src/actions', 'src/telemetry'], // the model endpoint: prompts, replies
  // Model families: each family's request, reply reading, coordinate space and feedback, one folder each.
  'src/families': ['src/common', 'src/image', 'src/actions', 'src/model'],
  'src/trajectory': ['src/common', 'src/contract'], // the run folder and the run stores
  'src/environments': ['src/contract', 'src/actions'], // the custom-environment plugin interface
  // The agent's rules: dispatch, failure types, secrets, replies, budgets.
  'src/agent': ['src/common', 'src/contract', 'src/coords', 'src/actions', 'src/model', 'src/trajectory'],
  'src/replay': ['src/contract', 'src/trajectory'], // what a replay runs again, the action cache's keys
  'src/notify': ['src/common', 'src/contract'], // webhook notifications: config section, body, signature, POST
  // Configuration and the Temporal connection.
  'src/runtime': [
    'src/common',
    'src/contract',
    'src/actions',
    'src/policy',
    'src/infra',
    'src/telemetry',
    'src/codec',
    'src/model',
    'src/families',
    'src/trajectory',
    'src/agent',
    'src/notify',
  ],
  // Evaluation: task sets, checks, judge, records, results.
  'src/eval': ['src/contract', 'src/infra', 'src/model', 'src/trajectory', 'src/agent'],
  // The browser: pool, environment, policy guard.
  'src/browser': [
    'src/common',
    'src/contract',
    'src/coords',
    'src/policy',
    'src/infra',
    'src/model',
    'src/agent',
    'src/runtime',
  ],
  // The desktop sandbox and its agent's tools.
  'src/desktop': [
    'src/contract',
    'src/actions',
    'src/policy',
    'src/infra',
    'src/model',
    'src/trajectory',
    'src/agent',
    'src/runtime',
    'src/browser',
  ],
  'src/scripted': ['src/image', 'src/actions', 'src/model', 'src/desktop'], // the scripted model server (tests, demo)
  // The run viewer and report.
  'src/viewer': [
    'src/contract',
    'src/coords',
    'src/image',
    'src/actions',
    'src/families',
    'src/trajectory',
    'src/agent',
    'src/replay',
    'src/eval',
    'src/desktop',
  ],
  // Deterministic workflow code and its messages (Temporal SDK definitions).
  workflows: ['src/common', 'src/contract', 'src/trajectory', 'src/agent', 'src/eval'],
  // The activities the worker hosts; activities/environments/ holds one file per environment.
  activities: [
    'src/common',
    'src/contract',
    'src/coords',
    'src/image',
    'src/actions',
    'src/telemetry',
    'src/model',
    'src/families',
    'src/trajectory',
    'src/environments',
    'src/agent',
    'src/replay',
    'src/notify',
    'src/runtime',
    'src/eval',
    'src/browser',
    'src/desktop',
    'src/scripted',
    'workflows',
  ],
  // The worker process, and the embeddable worker (`durable-cua/worker`, worker/embed.ts).
  worker: [
    'src/common',
    'src/contract',
    'src/actions',
    'src/model',
    'src/families',
    'src/infra',
    'src/telemetry',
    'src/codec',
    'src/environments',
    'src/agent',
    'src/notify',
    'src/runtime',
    'src/browser',
    'src/desktop',
    'activities',
  ],
  // The typed Temporal client (`durable-cua/client`): starting tasks, updates, signals, queries and watching; and the
  // package's contract entry (`durable-cua/contract`).
  client: [
    'src/common',
    'src/contract',
    'src/actions',
    'src/model',
    'src/families',
    'src/trajectory',
    'src/environments',
    'src/agent',
    'src/notify',
    'src/runtime',
    'src/eval',
    'workflows',
    'activities',
    'worker',
  ],
  // The web console (`cua console`): a server over client/ and the run store.
  console: [
    'src/contract',
    'src/codec',
    'src/trajectory',
    'src/runtime',
    'src/eval',
    'src/browser',
    'src/viewer',
    'client',
  ],
  // The MCP server (`cua mcp`): tools and resources over client/, the run store, the run as text (src/viewer) and
  // the console's access helpers.
  mcp: ['src/common', 'src/contract', 'src/image', 'src/trajectory', 'src/runtime', 'src/viewer', 'client', 'console'],
  // The `cua` commands.
  cli: [
    'src/common',
    'src/contract',
    'demo',
    'src/infra',
    'src/codec',
    'src/families',
    'src/trajectory',
    'src/agent',
    'src/replay',
    'src/runtime',
    'src/eval',
    'src/scripted',
    'src/viewer',
    'workflows',
    'worker',
    'client',
    'console',
    'mcp',
  ],
  // Benchmarks.
  bench: [
    'src/contract',
    'src/coords',
    'src/image',
    'src/actions',
    'src/infra',
    'src/model',
    'src/families',
    'src/trajectory',
    'src/agent',
    'src/replay',
    'src/runtime',
    'src/browser',
    'src/scripted',
    'workflows',
    'activities',
    'worker',
    'client',
  ],
  scripts: ['src/infra', 'src/trajectory', 'workflows', 'client', 'console', 'bench'], // maintenance scripts
  examples: ['client', 'worker'], // how an application uses the package (its entries: client/, worker/embed.ts)
};

const FOLDERS = Object.keys(DEPS);

// The table must name only folders above the naming entry: a typo, a folder with no entry or a pair of folders that
// lean on each other stops the check here, with one line.
FOLDERS.forEach((folder, i) => {
  for (const dep of DEPS[folder]) {
    if (!FOLDERS.includes(dep)) throw new Error(`.dependency-cruiser.cjs: ${folder} names ${dep}, which has no entry`);
    if (FOLDERS.indexOf(dep) > i) {
      throw new Error(`.dependency-cruiser.cjs: ${folder} names ${dep}, whose entry is below it: move one of them`);
    }
  }
});

const escape = (s) => s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
/** The files of a folder's own entry: under it, but not under a subfolder that has an entry of its own. */
function own(folder) {
  const inner = FOLDERS.filter((f) => f.startsWith(`${folder}/`)).map((f) => escape(f.slice(folder.length + 1)));
  return `^${escape(folder)}/${inner.length ? `(?!(?:${inner.join('|')})/)` : ''}`;
}

const perFolder = FOLDERS.map((folder) => ({
  name: `deps-of-${folder.replace(/\//g, '-')}`,
  comment: `${folder} may import ${DEPS[folder].join(', ') || 'no other project folder'} (.dependency-cruiser.cjs)`,
  severity: 'error',
  from: { path: own(folder) },
  to: { pathNot: [own(folder), ...DEPS[folder].map(own), 'node_modules/'], dependencyTypesNot: ['core'] },
}));

module.exports = {
  forbidden: [
    {
      name: 'no-circular',
      comment: 'Files that import each other in a loop: move what both need one folder down.',
      severity: 'error',
      from: {},
      to: { circular: true },
    },
    ...perFolder,
    {
      name: 'not-in-deps',
      comment: 'A folder with no entry: add one to DEPS in .dependency-cruiser.cjs.',
      severity: 'error',
      from: { pathNot: ['node_modules/', ...FOLDERS.map((f) => `^${escape(f)}/`)] },
      to: { pathNot: 'node_modules/', dependencyTypesNot: ['core'] },
    },
  ],
  options: {
    // Type-only imports count: a folder leans on what it names, whether or not the import survives compilation.
    tsPreCompilationDeps: true,
    tsConfig: { fileName: 'tsconfig.json' },
    // Packages that name their files only in `exports` (the MCP SDK's subpaths) resolve as Node's require does.
    enhancedResolveOptions: { exportsFields: ['exports'], conditionNames: ['require', 'node', 'default'] },
    doNotFollow: { path: 'node_modules' },
    // Tests may import any folder; bin/cua.js only loads cli/ (or its build); root files are tool configs.
    exclude: { path: ['^(node_modules|dist|test|bin|\\.tools)/', '^[^/]+\\.[cm]?[jt]s$'] },
  },
};
// Read by test/unit/layering.test.ts (not a dependency-cruiser option, so kept off the exported config's keys).
Object.defineProperty(module.exports, 'DEPS', { value: DEPS, enumerable: false });
