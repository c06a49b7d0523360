// `npm run bench`: measures step time, settling, persistence, history growth, concurrency and resume on local
// fixtures with the scripted model, prints a measured-vs-target table and writes bench/results/*.json.
// Run a subset with `npm run bench -- --only step,settle`. See bench/README.md.
import { cleanupAll, installExitHandlers } from './cleanup';
import { Bench } from './context';
import { BenchUsageError, parseOptions, QUIET_WAIT_CAP_SECONDS, USAGE } from './options';
import { finalTable, loadNow, loadRow, machineInfo, writeResults } from './report';
import type { ResultsFile, SectionName, SectionOutput } from './report';
import { benchCheckpoint } from './sections/checkpoint';
import { benchConcurrency } from './sections/concurrency';
import { benchEgress } from './sections/egress';
import { benchElement } from './sections/element';
import { benchHistory } from './sections/history';
import { benchPersistence } from './sections/persistence';
import { benchReplay } from './sections/replay';
import { benchResume } from './sections/resume';
import { benchScaleOut } from './sections/scale-out';
import { benchSettle } from './sections/settle';
import { benchStep } from './sections/step';
import { benchKinds } from './sections/kinds';

type Runner = (b: Bench) => Promise<SectionOutput>;

const RUNNERS: Partial<Record<SectionName, Runner>> = {
  settle: benchSettle,
  checkpoint: benchCheckpoint,
  element: benchElement,
  replay: benchReplay,
  persistence: benchPersistence,
  step: benchStep,
  kinds: benchKinds,
  history: benchHistory,
  concurrency: benchConcurrency,
  resume: benchResume,
  'scale-out': benchScaleOut,
  egress: benchEgress,
};

const log = (line: string) => console.log(line);

/** Waits for the 1-minute load average to fall below `quiet` (0: not at all), at most QUIET_WAIT_CAP_SECONDS. */
async function waitForQuiet(quiet: number, section: string, log: (line: string) => void): Promise<void> {
  if (quiet <= 0 || loadNow() < quiet) return;
  const t0 = Date.now();
  log(`[bench] ${section}: waiting for the load average (${loadNow().toFixed(2)}) to fall below ${quiet}`);
  let said = t0;
  while (loadNow() >= quiet && Date.now() - t0 < QUIET_WAIT_CAP_SECONDS * 1000) {
    await new Promise((r) => setTimeout(r, 2_000));
    if (Date.now() - said >= 30_000) {
      said = Date.now();
      log(`[bench] ${section}: load average ${loadNow().toFixed(2)} after ${Math.round((said - t0) / 1000)} s`);
    }
  }
  if (loadNow() >= quiet)
    log(`[bench] ${section}: starting at load ${loadNow().toFixed(2)} after ${QUIET_WAIT_CAP_SECONDS} s`);
}

async function main(): Promise<number> {
  let options;
  try {
    options = parseOptions(process.argv.slice(2));
  } catch (err) {
    if (!(err instanceof BenchUsageError)) throw err;
    console.error(`${err.message}\n${USAGE}`);
    return 2;
  }
  if (options.help) {
    console.log(USAGE);
    return 0;
  }
  installExitHandlers(log);
  const started = Date.now();
  const results: ResultsFile = {
    startedAt: new Date(started).toISOString(),
    totalSeconds: 0,
    machine: machineInfo(),
    options: { only: options.only, repeatCapSeconds: options.repeatCapSeconds, levels: options.levels },
    sections: [],
    failures: [],
  };
  const bench = new Bench(log, options.keep, options.repeatCapSeconds, options.levels);
  log(`[bench] sections: ${options.only.join(', ')}; repeat cap ${options.repeatCapSeconds} s (temp dir ${bench.dir})`);
  try {
    for (const name of options.only) {
      const runner = RUNNERS[name];
      if (!runner) continue;
      await waitForQuiet(options.quietLoad, name, log);
      const t0 = Date.now();
      const start = loadNow();
      log(`\n[bench] == ${name} == (load average ${start.toFixed(2)})`);
      try {
        const result = await runner(bench);
        const load = { start, end: loadNow() };
        results.sections.push({
          ...result,
          rows: [...result.rows, loadRow(name, load)],
          seconds: Math.round((Date.now() - t0) / 100) / 10,
          load,
        });
        log(
          `[bench] ${name} done in ${((Date.now() - t0) / 1000).toFixed(1)} s ` +
            `(load average ${load.start.toFixed(2)} → ${load.end.toFixed(2)})`,
        );
      } catch (err) {
        const error = err instanceof Error ? (err.stack ?? err.message) : String(err);
        results.failures.push({ section: name, error, load: { start, end: loadNow() } });
        log(`[bench] ${name} FAILED: ${error}`);
      }
    }
  } finally {
    log('\n[bench] stopping worker, dev server, browsers');
    await cleanupAll(log);
  }
  results.totalSeconds = Math.round((Date.now() - started) / 100) / 10;
  const rows = results.sections.flatMap((s) => s.rows);
  log(`\n${finalTable(rows)}`);
  for (const f of results.failures) log(`FAILED section ${f.section}: ${f.error.split('\n')[0]}`);
  log(`\n[bench] total ${results.totalSeconds.toFixed(1)} s`);
  if (options.write) for (const file of writeResults(results)) log(`[bench] wrote ${file}`);
  return results.failures.length > 0 ? 1 : 0;
}

main().then(
  (code) => process.exit(code),
  async (err: unknown) => {
    console.error(err);
    await cleanupAll(log);
    process.exit(1);
  },
);
