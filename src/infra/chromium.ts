// Launch flags for headless Debian Chromium on a closed network (keeps it quiet and sandbox-free as root), and the one
// `--disable-features` list: Chromium reads only the last such flag, so every list given is merged into one.

/**
 * The features Playwright's own launch turns off (its list of Chromium switches, Playwright 1.65). Its
 * `--disable-features` comes before ours, and Chromium keeps only the last one, so ours repeats them; a unit test
 * checks the list against the installed Playwright.
 */
export const PLAYWRIGHT_DISABLED_FEATURES: readonly string[] = [
  'AvoidUnnecessaryBeforeUnloadCheckSync',
  'DestroyProfileOnBrowserClose',
  'HttpsUpgrades',
  'HttpsFirstBalancedModeAutoEnable',
  'LensOverlay',
  'MediaRouter',
  'PaintHolding',
  'ThirdPartyStoragePartitioning',
  'AvoidCorsURLLoaderRestartOnRedirect',
  'TcpPortRandomizationWin',
  'OptimizationHints',
  'NetworkTimeServiceQuerying',
  'AimEnabled',
  'PreconnectToSearch',
  'msForceBrowserSignIn',
  'msEdgeUpdateLaunchServicesPreferredVersion',
];

/**
 * Browser UI a headless agent never shows. Every browser context gets a window of its own, and each window preloads
 * the address bar's suggestion popup as a WebUI page in a renderer of its own (`--top-chrome-webui`): about 30 MB
 * per session, more than the session's page costs. Puppeteer turns the same two features off.
 */
const OUR_DISABLED_FEATURES: readonly string[] = ['WebUIOmniboxPopup', 'WebUIOmniboxAimPopup'];

const DISABLE_FEATURES = '--disable-features=';

/**
 * `args` with every `--disable-features=` in it merged into one, placed last (after Playwright's own, which it
 * repeats), so no list given replaces another.
 */
export function withDisabledFeatures(args: readonly string[]): string[] {
  const features = new Set([...PLAYWRIGHT_DISABLED_FEATURES, ...OUR_DISABLED_FEATURES]);
  for (const arg of args) {
    if (!arg.startsWith(DISABLE_FEATURES)) continue;
    for (const name of arg.slice(DISABLE_FEATURES.length).split(',')) if (name) features.add(name);
  }
  return [...args.filter((arg) => !arg.startsWith(DISABLE_FEATURES)), `${DISABLE_FEATURES}${[...features].join(',')}`];
}

export const CHROMIUM_ARGS: readonly string[] = withDisabledFeatures([
  '--no-sandbox',
  '--disable-gpu',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
  '--no-first-run',
  '--disable-quic',
  '--disable-dev-shm-usage',
]);
