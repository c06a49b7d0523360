// The layers of the code, bottom first: a module may import its own folder and the folders listed before it, never
// one listed after it (type-only imports included), and no import circle is allowed. This list is the one place the
// order is written; `npm run lint` (and so .ci/run) checks it. A folder not listed here fails too: place a new one.
const LAYERS = [
  'src/common', // tiny helpers with no project imports (sleep, ConfigError)
  'demo', // the demo site (a server of its own)
  'src/coords', // model ↔ screen coordinates
  'src/image', // screenshot resizing and encoding
  'src/actions', // the action schemas, their descriptions and what an action acts on
  'src/policy', // the URL policy
  'src/infra', // local programs: the dev server, Chromium, the cluster, the build cache
  'src/telemetry', // OpenTelemetry: the traces config, the agent's spans, the process's tracer provider
  'src/codec', // payload encryption
  'src/model', // the model endpoint: prompts, context, reading its replies
  'src/families', // the model families (the interface, the registry, Fara-1.5 and Fara-7B): what differs per model
  'src/trajectory', // the run folder and the run stores
  'src/environments', // the custom-environment plugin interface
  'src/agent', // the agent's rules: dispatch, failure types, end reasons, secrets, replies
  'src/contract', // the task contract and the activities' inputs and outputs (zod and pure modules only)
  'src/replay', // what a replay runs again (a recorded run's decisions) and the action cache's keys
  'src/notify', // webhook notifications: the config section, the body, its signature, the POST
  'src/runtime', // configuration and the Temporal connection
  'src/eval', // evaluation: task sets, checks, judge, records, results
  'src/browser', // the browser: pool, environment, policy guard
  'src/desktop', // the desktop sandbox and its agent's tools
  'src/scripted', // the scripted model server (tests, demo)
  'src/viewer', // the run viewer and report
  'workflows', // deterministic workflow code and its messages (Temporal SDK definitions)
  'activities', // the activities the worker hosts; activities/environments/ holds one file per environment
  'worker', // the worker process
  'api', // the package's public entry points and the task operations
  'console', // the web console (`cua console`): a server over api/'s client and the run store
  'cli', // the `cua` commands
  'bench', // benchmarks
  'scripts', // maintenance scripts
  'examples', // how an application uses the package (api/ only)
];

const escape = (s) => s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
const folder = (layer) => `^${escape(layer)}/`;

const upward = LAYERS.slice(0, -1).map((layer, i) => ({
  name: `upward-from-${layer.replace(/\//g, '-')}`,
  comment: `${layer} sits below ${LAYERS.slice(i + 1).join(', ')} and may not import them (.dependency-cruiser.cjs)`,
  severity: 'error',
  from: { path: folder(layer) },
  to: { path: LAYERS.slice(i + 1).map(folder) },
}));

module.exports = {
  forbidden: [
    {
      name: 'no-circular',
      comment: 'Files that import each other in a loop: move what both need one layer down.',
      severity: 'error',
      from: {},
      to: { circular: true },
    },
    ...upward,
    {
      name: 'not-in-a-layer',
      comment: 'A folder that is in no layer: add it to LAYERS in .dependency-cruiser.cjs.',
      severity: 'error',
      from: { pathNot: ['^node_modules/', ...LAYERS.map(folder)] },
      to: { pathNot: '^node_modules/', dependencyTypesNot: ['core'] },
    },
  ],
  options: {
    // Type-only imports count: a layer leans on what it names, whether or not the import survives compilation.
    tsPreCompilationDeps: true,
    tsConfig: { fileName: 'tsconfig.json' },
    doNotFollow: { path: 'node_modules' },
    // Tests may import any layer; bin/cua.js only loads cli/ (or its build); root files are tool configs.
    exclude: { path: ['^(node_modules|dist|test|bin|\\.tools)/', '^[^/]+\\.[cm]?[jt]s$'] },
  },
};
// Read by test/unit/layering.test.ts (not a dependency-cruiser option, so kept off the exported config).
Object.defineProperty(module.exports, 'LAYERS', { value: LAYERS, enumerable: false });
