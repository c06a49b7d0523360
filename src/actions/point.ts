// Where an action points, in the model's own coordinate space (for markers on screenshots and for summaries).
import type { AgentAction } from './schemas';

export interface ModelPoint {
  x: number;
  y: number;
}

/**
 * The model-space point an action targets, if any: the click or move target, the end point of a drag, or the
 * field a Fara-7B `type` clicks first. Conversion to viewport pixels belongs to the coordinate module.
 */
export function actionPoint(action: AgentAction): ModelPoint | undefined {
  if (!('coordinate' in action) || action.coordinate === undefined) return undefined;
  const [x, y] = action.coordinate;
  return { x, y };
}
