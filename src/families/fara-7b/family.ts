// Fara-7B (Qwen2.5-VL-based): its action space (11 actions, coordinates in pixels of the screenshot resized by factor
// 28, so its tool schema depends on the screenshot size), our Fara-7B prompt; it has no question action and stops
// with terminate at a critical point instead.
import { FARA7B_DEFAULT_SCREEN, makeFaraSpace } from '../../actions/fara';
import type { FaraSpace } from '../../actions/fara';
import { fara7bActionSchema } from '../../actions/schemas';
import type { Fara7bAction } from '../../actions/schemas';
import { faraFamily } from '../fara-common/family';
import type { ModelFamily } from '../family';

export const FARA7B_SPACE: FaraSpace<Fara7bAction> = makeFaraSpace(
  'fara-7b',
  fara7bActionSchema,
  fara7bActionSchema.options,
  { coordinateSpace: 'resized-pixels', resizeFactor: 28, hiddenArguments: {} },
  FARA7B_DEFAULT_SCREEN,
);

export const FARA7B_FAMILY: ModelFamily = faraFamily(FARA7B_SPACE);
