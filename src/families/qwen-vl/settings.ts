// Which Qwen-VL generation an endpoint serves, and the grid a Qwen3-VL model's points lie on. The generation is the
// endpoint's `tool` ('2.5' or '3'), else what its model's name says, else the newest; the grid is the endpoint's
// `grid`, else 999 (Qwen's own cookbook rescales with /999; some agent prompts say 1000x1000, so it is a setting).
import type { EndpointPromptSettings } from '../family';

export const QWEN_VL = 'qwen-vl';

/** Qwen2.5-VL (pixels of the resized screenshot) or Qwen3-VL (a relative grid). */
export type QwenGeneration = '2.5' | '3';
export const QWEN_GENERATIONS: readonly QwenGeneration[] = ['2.5', '3'];

/** The denominators Qwen3-VL's grid may have. */
export type QwenGrid = 999 | 1000;
export const QWEN_GRIDS: readonly QwenGrid[] = [999, 1000];
export const DEFAULT_QWEN_GRID: QwenGrid = 999;

/** The generation a model's name implies: `qwen2.5` (any case, `2_5`/`2-5` too) is 2.5; anything else is 3. */
export function generationForModel(model: string): QwenGeneration {
  return /qwen2[._-]?5/i.test(model) ? '2.5' : '3';
}

/** The endpoint's generation: its `tool`, else its model's name, else 3. */
export function generationOf(endpoint: EndpointPromptSettings | undefined): QwenGeneration {
  const tool = endpoint?.tool;
  if (tool === '2.5' || tool === '3') return tool;
  return typeof endpoint?.model === 'string' ? generationForModel(endpoint.model) : '3';
}

/** The endpoint's Qwen3-VL grid: its `grid` when it is one of the two, else 999. */
export function gridOf(endpoint: EndpointPromptSettings | undefined): QwenGrid {
  const grid = endpoint?.grid;
  return grid === 1000 || grid === 999 ? grid : DEFAULT_QWEN_GRID;
}

/** How a step's coordinates are read: the generation, and the size of the space its numbers live in. */
export interface QwenSpace {
  generation: QwenGeneration;
  /** 2.5: the resized screenshot's size; 3: the grid, square. */
  width: number;
  height: number;
}

/** The space of the endpoint's model for a resized screenshot of this size. */
export function spaceOf(
  endpoint: EndpointPromptSettings | undefined,
  screen: { width: number; height: number },
): QwenSpace {
  const generation = generationOf(endpoint);
  if (generation === '2.5') return { generation, width: screen.width, height: screen.height };
  const grid = gridOf(endpoint);
  return { generation, width: grid, height: grid };
}
