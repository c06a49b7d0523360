// The activity a schedule's monitor calls after it notified about a run: a `monitor` note in that run's folder (its
// events.jsonl), saying which notification went out with the old and new values. Written once: a retry finds it.
import type { MonitorActivities, MonitorNoteInput } from '../src/contract/monitor';
import { monitorEvent } from '../src/trajectory/events';
import type { RunFiles } from './support';

export function createMonitorActivities(files: RunFiles): MonitorActivities {
  return {
    async recordMonitorNote(req: MonitorNoteInput): Promise<void> {
      const w = await files.writer(req.runId);
      const event = monitorEvent(req.step, req.text, {
        delivery_id: req.deliveryId,
        old_value: req.old,
        new_value: req.new,
      });
      if (!(await w.hasEvent(event.id))) await w.appendEvent(event);
    },
  };
}
