// The cookies the runtime itself adds to every browser session, whatever the task (the session setup sets them
// after any saved state is loaded). They are not the task's: a saved sign-in leaves them out, so its hosts are the
// ones the task's own pages gave it state for, and the next session gets them from the runtime anyway.

/** Keeps Bing's result links in the same tab (fewer popups for the single-tab agent). */
export const SAME_TAB_SEARCH_COOKIE = {
  name: 'SRCHHPGUSR',
  value: 'EXLKNT=0',
  domain: '.bing.com',
  path: '/',
} as const;

/** Every cookie the runtime adds to a session. */
export const RUNTIME_COOKIES: readonly { name: string; domain: string }[] = [SAME_TAB_SEARCH_COOKIE];

/**
 * A cookie the runtime adds, by name and domain (its value may have changed: a site rewrites its own preference
 * cookie, and the runtime sets it again in the next session).
 */
export function isRuntimeCookie(cookie: { name: string; domain: string }): boolean {
  const domain = cookie.domain.replace(/^\./, '').toLowerCase();
  return RUNTIME_COOKIES.some((c) => c.name === cookie.name && c.domain.replace(/^\./, '') === domain);
}
