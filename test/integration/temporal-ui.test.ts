// What an operator sees in the Temporal Web UI (the dev server's UI 2.54.1, driven in Debian Chromium): the task
// filtered by its CuaStatus search attribute, the instruction as summary, the pending question as current details,
// the status/steps queries, and one activity summary per step in the event history and timeline.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { chromium } from 'playwright';
import type { Browser, Locator, Page } from 'playwright';
import { chromiumPath } from '../../src/infra/paths';
import { CHROMIUM_ARGS } from '../../src/infra/chromium';
import { replyToTask } from '../../client/tasks';
import type { TaskResult } from '../../src/contract/task';
import { eventually, untilWaiting } from './harness';
import { useHarness } from './use-harness';
import type { Harness } from './harness';

const INSTRUCTION = 'Search hotels in the city I want.';
const QUESTION = 'Which city should I search in?';
/** The UI is a heavy single-page app on a 2-core machine: give every rendering wait room. */
const UI_TIMEOUT = 30_000;

/** Waits until the locator's first match is rendered and visible. */
async function shown(locator: Locator): Promise<void> {
  await locator.first().waitFor({ state: 'visible', timeout: UI_TIMEOUT });
}

describe('Temporal Web UI (dev server with UI, real Chromium)', () => {
  let h: Harness;
  let browser: Browser;
  let page: Page;
  useHarness((x) => (h = x), { ui: true });

  beforeAll(async () => {
    browser = await chromium.launch({ executablePath: chromiumPath(), args: [...CHROMIUM_ARGS] });
    page = await browser.newPage({ viewport: { width: 1600, height: 1000 } });
  });
  afterAll(async () => {
    await browser?.close();
  });
  /** Switches the workflow page's tab (in-app navigation: no reload of the single-page app). */
  const tab = async (testId: string): Promise<void> => {
    await page.getByTestId(testId).click();
    await page.waitForSelector(`[data-testid="${testId}"][aria-selected="true"]`, { timeout: UI_TIMEOUT });
  };

  it('shows summary, current details, the CuaStatus attribute, queries and step summaries', async () => {
    const ui = h.server.uiUrl;
    if (!ui) throw new Error('the harness started the dev server without its UI');
    await eventually(async () => (await fetch(ui)).ok, 30_000, 'the Web UI to answer');
    const handle = await h.start({ script: 'ask-city', instruction: INSTRUCTION });
    const id = handle.workflowId;
    const wf = `${ui}/namespaces/default/workflows/${id}/${handle.firstExecutionRunId}`;
    await untilWaiting(handle);
    // Visibility is updated asynchronously; only open the list once the server lists the task.
    const filter = `CuaStatus="waiting_for_user"`;
    await eventually(
      async () => {
        for await (const w of h.client.workflow.list({ query: filter })) if (w.workflowId === id) return true;
        return false;
      },
      20_000,
      'the visibility store to list the waiting task',
    );

    // 1. Workflow list filtered by the search attribute, with CuaStatus added as a column.
    await page.goto(`${ui}/namespaces/default/workflows?query=${encodeURIComponent(filter)}`);
    const row = page.getByRole('row').filter({ has: page.getByRole('link', { name: id }) });
    await shown(row);
    await page.getByRole('button', { name: 'Configure Columns' }).click();
    await page.getByRole('button', { name: 'Add CuaStatus column' }).click();
    await page.getByRole('button', { name: 'Close Workflows Table configuration' }).click();
    await shown(page.getByRole('columnheader', { name: 'CuaStatus' }));
    await shown(row.getByText('waiting_for_user', { exact: true }));

    // 2. The row links to the workflow page (client-side navigation, as are the tab switches below).
    await row.getByRole('link', { name: id }).click();
    await page.waitForURL(`${wf}/**`);
    // User Metadata tab: the static summary and the current details are markdown rendered in iframes.
    await tab('user-metadata-tab');
    await shown(page.frameLocator('#user-metadata-summary').getByText(INSTRUCTION));
    const details = page.frameLocator('#user-metadata-current-details');
    await shown(details.getByText('Waiting for a reply'));
    await shown(details.getByText(QUESTION));

    // The attribute value itself, on the Search Attributes tab.
    await tab('search-attributes-tab');
    await shown(page.getByText('"CuaStatus": "waiting_for_user"'));

    // 3. Queries tab: the names come from __temporal_workflow_metadata; running `status` shows its JSON.
    await tab('queries-tab');
    await page.getByTestId('query-select-button').click();
    await shown(page.getByRole('option', { name: 'steps', exact: true }));
    await page.getByRole('option', { name: 'status', exact: true }).click();
    await page.getByRole('button', { name: 'Run Query' }).click();
    const result = page.getByTestId('query-result');
    await shown(result.getByText('"status": "waiting_for_user"'));
    await shown(result.getByText(QUESTION));

    // Event history while waiting: the instruction on the start event, the pause as an activity summary.
    await tab('history-tab');
    await shown(page.getByText('step 1 · pause (waiting for user)', { exact: true }));
    await shown(page.getByText(INSTRUCTION, { exact: true }));

    // After the reply the task clicks, types and finishes; each action shows up as an activity summary.
    await replyToTask(h.client, id, 'Lisbon');
    expect((await handle.result()) as TaskResult).toMatchObject({ status: 'complete' });
    await page.reload();
    await shown(page.getByText('step 2 · left_click (500, 200)', { exact: true }));
    await tab('timeline-tab');
    await shown(page.getByText('step 2 · left_click (500, 200)'));
    await shown(page.getByText('step 3 · type "Lisbon"'));
  }, 120_000);
});
