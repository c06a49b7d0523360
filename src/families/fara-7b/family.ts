// Fara-7B (Qwen2.5-VL-based): the Fara-7B action space (src/actions/fara.ts: coordinates in pixels of the resized
// screenshot, resize factor 28), our Fara-7B prompt; it has no question action and stops with terminate instead.
import { faraSpace } from '../../actions/fara';
import { faraFamily } from '../fara-common/family';
import type { ModelFamily } from '../family';

export const FARA7B_FAMILY: ModelFamily = faraFamily(faraSpace('fara-7b'));
