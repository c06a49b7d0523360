// What the browser agent's actions act on: the slice of a browser (or a custom environment's session) that the
// dispatcher (src/agent/dispatch.ts) drives. Beside the action schemas so environments and the dispatcher share it.

/** The slice of the browser environment the dispatcher needs (tests may pass a fake). */
export interface ActionTarget {
  leftClick(x: number, y: number): Promise<unknown>;
  doubleClick(x: number, y: number): Promise<unknown>;
  tripleClick(x: number, y: number): Promise<unknown>;
  rightClick(x: number, y: number): Promise<unknown>;
  mouseMove(x: number, y: number): Promise<unknown>;
  leftClickDrag(x: number, y: number): Promise<unknown>;
  type(
    text: string,
    options: { pressEnter?: boolean; deleteExistingText?: boolean; at?: { x: number; y: number } },
  ): Promise<unknown>;
  keys(chord: readonly string[]): Promise<unknown>;
  scroll(dx: number, dy: number): Promise<unknown>;
  visitUrl(url: string): Promise<unknown>;
  /** The browser's reports `loadedFromRecord` when it opened a recorded URL instead (a restored tab, no history). */
  historyBack(): Promise<unknown>;
  wait(seconds: number): Promise<unknown>;
  pageMarkdown(): Promise<string>;
}
