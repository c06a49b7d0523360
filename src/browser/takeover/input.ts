// A person's input during a takeover, carried out on the session's page: mouse and keys through Playwright's mouse
// and keyboard (as the agent's own actions are), text typed key by key, and a navigation through the environment's
// own visit, so the URL policy decides it exactly as it decides the agent's visit_url.
import type { Page } from 'playwright';
import type { BrowserEnvironment } from '../environment';
import type { KeyInput, MouseInput, TakeoverInput } from './protocol';

async function mouse(page: Page, input: MouseInput): Promise<void> {
  const button = input.button ?? 'left';
  const clickCount = input.clickCount ?? 1;
  switch (input.action) {
    case 'move':
      return page.mouse.move(input.x, input.y);
    case 'down':
      await page.mouse.move(input.x, input.y);
      return page.mouse.down({ button, clickCount });
    case 'up':
      await page.mouse.move(input.x, input.y);
      return page.mouse.up({ button, clickCount });
    case 'wheel':
      await page.mouse.move(input.x, input.y);
      return page.mouse.wheel(input.deltaX ?? 0, input.deltaY ?? 0);
  }
}

/** The DOM's name for the space bar is a space; Playwright's is `Space`. */
const keyName = (key: string): string => (key === ' ' ? 'Space' : key);

function key(page: Page, input: KeyInput): Promise<void> {
  const name = keyName(input.key);
  switch (input.action) {
    case 'down':
      return page.keyboard.down(name);
    case 'up':
      return page.keyboard.up(name);
    case 'press':
      return page.keyboard.press(name);
  }
}

/**
 * Carries out one input on the environment's current page. Throws what the page or the policy throws (an unknown key,
 * PolicyBlockedError for a refused address, NavigationError); the caller tells the viewer.
 */
export async function applyInput(env: BrowserEnvironment, input: TakeoverInput): Promise<void> {
  switch (input.type) {
    case 'mouse':
      return mouse(env.page, input);
    case 'key':
      return key(env.page, input);
    case 'text':
      return env.page.keyboard.type(input.text);
    case 'navigate':
      await env.visitUrl(input.url);
      return;
  }
}

/** Whether an input counts as one thing the person did (moves and releases do not: they come with another). */
export function countsAsInput(input: TakeoverInput): boolean {
  if (input.type === 'mouse') return input.action === 'down' || input.action === 'wheel';
  if (input.type === 'key') return input.action !== 'up';
  return true;
}
