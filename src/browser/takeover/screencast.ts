// The screencast of a taken-over session: Chromium's own (CDP Page.startScreencast, JPEG frames, each acknowledged so
// the browser sends the next) on whatever page the session shows now, following it when a popup or a replacement
// page takes its place. Runs while at least one viewer watches; the last frame is kept for a viewer who joins.
import type { CDPSession, Page } from 'playwright';
import type { ServerMessage } from './protocol';

export type FrameMessage = Extract<ServerMessage, { type: 'frame' }>;

/** How often the screencast checks which page the session shows, and refreshes the title it reports. */
const FOLLOW_EVERY_MS = 500;
/** JPEG quality of the frames (Chromium's scale, 0–100). */
const JPEG_QUALITY = 70;

type ScreencastFrame = {
  data: string;
  sessionId: number;
  metadata: { deviceWidth?: number; deviceHeight?: number };
};

export class Screencast {
  private page: Page | undefined;
  private session: CDPSession | undefined;
  private timer: NodeJS.Timeout | undefined;
  private following: Promise<void> | undefined;
  private title = '';
  /** The newest frame, for a viewer who joins between paints (Chromium sends frames only when the page paints). */
  last: FrameMessage | undefined;

  constructor(
    /** The page the session shows now. */
    private readonly current: () => Page,
    private readonly send: (frame: FrameMessage) => void,
    /** Called on every follow tick, with the page (the lease reports the policy's refusals there). */
    private readonly onTick: () => void = () => undefined,
  ) {}

  get running(): boolean {
    return this.timer !== undefined;
  }

  start(): void {
    if (this.timer) return;
    this.timer = setInterval(() => this.tick(), FOLLOW_EVERY_MS);
    this.tick();
  }

  async stop(): Promise<void> {
    if (this.timer) clearInterval(this.timer);
    this.timer = undefined;
    await this.following;
    await this.detach();
  }

  private tick(): void {
    this.onTick();
    this.following ??= this.follow().finally(() => (this.following = undefined));
    const page = this.page;
    if (page && !page.isClosed()) {
      void page
        .title()
        .then((title) => this.retitle(page, title))
        .catch(() => undefined);
    }
  }

  /** The page's title (and URL) as of now; a page that changed them without painting has its last frame sent again. */
  private retitle(page: Page, title: string): void {
    this.title = title;
    const last = this.last;
    if (page !== this.page || !last || (last.title === title && last.url === page.url())) return;
    this.last = { ...last, title, url: page.url() };
    this.send(this.last);
  }

  /** Moves the screencast to the session's current page if it is not on it. */
  private async follow(): Promise<void> {
    const page = this.current();
    if (!this.timer || (page === this.page && this.session)) return;
    await this.detach();
    if (page.isClosed()) return;
    this.page = page;
    try {
      const session = await page.context().newCDPSession(page);
      this.session = session;
      session.on('Page.screencastFrame', (frame: ScreencastFrame) => this.onFrame(session, page, frame));
      await session.send('Page.startScreencast', { format: 'jpeg', quality: JPEG_QUALITY });
    } catch {
      this.session = undefined; // the page went away meanwhile: the next tick finds the one that replaced it
    }
  }

  private onFrame(session: CDPSession, page: Page, frame: ScreencastFrame): void {
    void session.send('Page.screencastFrameAck', { sessionId: frame.sessionId }).catch(() => undefined);
    if (session !== this.session) return;
    const viewport = page.viewportSize();
    this.last = {
      type: 'frame',
      data: frame.data,
      width: frame.metadata.deviceWidth ?? viewport?.width ?? 0,
      height: frame.metadata.deviceHeight ?? viewport?.height ?? 0,
      url: page.url(),
      title: this.title,
    };
    this.send(this.last);
  }

  private async detach(): Promise<void> {
    const session = this.session;
    this.session = undefined;
    this.page = undefined;
    if (!session) return;
    await session.send('Page.stopScreencast').catch(() => undefined);
    await session.detach().catch(() => undefined);
  }
}
