// A stopwatch with laps: each `lap(name)` adds the time since the last lap (or the start) to that name's total, in
// whole milliseconds. Used to say where an act's time went (ActResult.timings).

export class Laps {
  private last = performance.now();
  readonly ms: Record<string, number> = {};

  /** Adds the time since the last lap to `name`, minus `less` (time already counted under other names). */
  lap(name: string, less = 0): void {
    const now = performance.now();
    this.add(name, now - this.last - less);
    this.last = now;
  }

  /** Adds `ms` to `name` without starting a new lap. */
  add(name: string, ms: number): void {
    this.ms[name] = (this.ms[name] ?? 0) + Math.max(0, Math.round(ms));
  }
}
