// Fara-1.5 (Qwen3.5-based): the Fara-1.5 action space (src/actions/fara.ts: 18 actions, a fixed 1000x1000
// coordinate space, screenshots resized by factor 32), our Fara-1.5 prompt, and ask_user_question for its questions.
import { faraSpace } from '../../actions/fara';
import { faraFamily } from '../fara-common/family';
import type { ModelFamily } from '../family';

export const FARA15_FAMILY: ModelFamily = faraFamily(faraSpace('fara-1.5'));
