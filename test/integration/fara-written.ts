// The site of test/fixtures/trajectory/fara_written, a run folder laid out as Fara-1.5's own writer lays it out
// (task.json without a start URL, a start page observation with `url: ""`, uuid-hex event ids, timestamps without a
// zone, `run_id: null`, status and outcome in solver_log/status.json), recorded on http://127.0.0.1:36235/: click the
// blue half of / (to /b), click the green half of /b (to /c), then ask which size. The pages hold no text, so their
// screenshots do not depend on the fonts installed. No vitest import here.
import path from 'node:path';
import type { FixtureServer } from '../fixtures/browser/server';

export const FARA_WRITTEN_FIXTURE = path.resolve(__dirname, '../fixtures/trajectory/fara_written');
/** The origin the fixture's events name. */
export const FARA_WRITTEN_ORIGIN = 'http://127.0.0.1:36235';
export const FARA_WRITTEN_QUESTION = 'Which size should I pick?';

/** A 1440×900 page of two halves: `top` and `bottom` colours; `link` makes one half a link. */
function page(top: string, bottom: string, link?: { half: 'top' | 'bottom'; to: string }): string {
  const half = (which: 'top' | 'bottom', colour: string) => {
    const style = `display:block;position:absolute;left:0;top:${which === 'top' ? 0 : 450}px;width:1440px;height:450px;background:${colour}`;
    return link?.half === which ? `<a href="${link.to}" style="${style}"></a>` : `<div style="${style}"></div>`;
  };
  return `<!doctype html><title>.</title><body style="margin:0;overflow:hidden">${half('top', top)}${half('bottom', bottom)}`;
}

/** Serves /, /b and /c as they were when the folder was recorded. */
export function routeFaraWrittenPages(site: FixtureServer): void {
  const pages: Record<string, string> = {
    '/': page('#1e6fd9', '#ffffff', { half: 'top', to: '/b' }),
    '/b': page('#ffffff', '#2e9d4f', { half: 'bottom', to: '/c' }),
    '/c': page('#f28c28', '#ffffff'),
  };
  for (const [pathname, html] of Object.entries(pages)) {
    site.route(pathname, (_req, res) => {
      res.writeHead(200, { 'content-type': 'text/html; charset=utf-8' });
      res.end(html);
    });
  }
}
