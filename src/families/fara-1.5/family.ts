// Fara-1.5 (Qwen3.5-based): its action space (18 actions, a fixed 1000x1000 coordinate space, screenshots resized by
// factor 32), our Fara-1.5 prompt, and ask_user_question for the questions it asks the person.
import { makeFaraSpace, NORM_DISPLAY_SIZE } from '../../actions/fara';
import type { FaraSpace } from '../../actions/fara';
import { fara15ActionSchema } from '../../actions/schemas';
import type { Fara15Action } from '../../actions/schemas';
import { faraFamily } from '../fara-common/family';
import type { ModelFamily } from '../family';

export const FARA15_SPACE: FaraSpace<Fara15Action> = makeFaraSpace(
  'fara-1.5',
  fara15ActionSchema,
  fara15ActionSchema.options,
  // Fara-1.5's `type` has no coordinate in its training schema; one written anyway (Fara-7B's habit) is clicked first.
  { coordinateSpace: 'norm1000', resizeFactor: 32, hiddenArguments: { type: ['coordinate'] } },
  { width: NORM_DISPLAY_SIZE, height: NORM_DISPLAY_SIZE },
);

export const FARA15_FAMILY: ModelFamily = faraFamily(FARA15_SPACE);
